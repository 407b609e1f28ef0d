import { DeltaError, InvalidTablePropertyError, UnsupportedTablePropertyError } from "../errors.ts";
import { validateTableProperties } from "./table-properties.ts";

/**
 * Table properties that ask for a protocol rather than configure a writer (PROTOCOL.md "Table
 * Features", "Protocol Evolution"; Delta's `delta.feature.<name>`, `delta.minReaderVersion`,
 * `delta.minWriterVersion`), and properties that switch on a feature Ebb does not write. As Spark
 * does, the protocol requests are applied to the `protocol` action and not stored in `metaData`;
 * a property whose feature Ebb would break is refused by name, so no table claims a feature its
 * writer ignores.
 */

/** What the properties ask of the protocol, beyond what the table's columns and settings need. */
export interface RequestedProtocol {
  readonly minReaderVersion: number;
  readonly minWriterVersion: number;
  /** Features asked for by `delta.feature.<name>`. */
  readonly features: readonly string[];
}

/** Features a table may list for Ebb to write it (writer-features.ts refuses each one when used). */
const FEATURES_EBB_MAY_LIST: ReadonlySet<string> = new Set([
  "appendOnly",
  "invariants",
  "checkConstraints",
  "changeDataFeed",
  "generatedColumns",
  "timestampNtz",
  "inCommitTimestamp",
]);

/** Properties that switch on a feature Ebb does not write, with the value that leaves it off. */
const REFUSED_WHEN_ON: Readonly<Record<string, { readonly feature: string; readonly off: string }>> = {
  "delta.enableDeletionVectors": { feature: "deletionVectors", off: "false" },
  "delta.enableRowTracking": { feature: "rowTracking", off: "false" },
  "delta.enableTypeWidening": { feature: "typeWidening", off: "false" },
  "delta.columnMapping.mode": { feature: "columnMapping", off: "none" },
};

const FEATURE_PREFIX = "delta.feature.";
const CONSTRAINT_PREFIX = "delta.constraints.";
const READER_VERSION = "delta.minReaderVersion";
const WRITER_VERSION = "delta.minWriterVersion";

/**
 * Splits a new table's properties into what `metaData.configuration` stores and what the protocol
 * must grant. Throws `UnsupportedTablePropertyError` naming the first property Ebb cannot honour,
 * `InvalidTablePropertyError` for a value that is not one.
 */
export function planProtocolProperties(configuration: Readonly<Record<string, string>>): {
  readonly stored: Record<string, string>;
  readonly requested: RequestedProtocol;
} {
  const stored: Record<string, string> = {};
  const features: string[] = [];
  let minReaderVersion = 1;
  let minWriterVersion = 1;
  for (const [key, value] of Object.entries(configuration)) {
    const refused = REFUSED_WHEN_ON[key];
    if (refused && value.trim().toLowerCase() !== refused.off) {
      throw new UnsupportedTablePropertyError(
        key,
        value,
        refused.feature,
        `leave it out or set it to "${refused.off}"`,
      );
    }
    if (key.startsWith(CONSTRAINT_PREFIX)) {
      // Their Spark SQL is not DuckDB's: Ebb could not check a row against them.
      throw new UnsupportedTablePropertyError(
        key,
        value,
        "checkConstraints",
        "check the rows in the flow's SQL instead",
      );
    }
    if (key.startsWith(FEATURE_PREFIX)) {
      const feature = key.slice(FEATURE_PREFIX.length);
      if (value.trim().toLowerCase() !== "supported" && value.trim().toLowerCase() !== "enabled") {
        throw new InvalidTablePropertyError(key, value, '"supported"');
      }
      if (!FEATURES_EBB_MAY_LIST.has(feature)) {
        throw new UnsupportedTablePropertyError(key, value, feature, "leave it out");
      }
      features.push(feature);
      continue;
    }
    if (key === READER_VERSION) {
      minReaderVersion = version(key, value, [1, 2, 3], 2, "columnMapping");
      continue;
    }
    if (key === WRITER_VERSION) {
      minWriterVersion = version(key, value, [1, 2, 3, 4, 5, 6, 7], [5, 6], "columnMapping");
      continue;
    }
    stored[key] = value;
  }
  if (minReaderVersion === 3 && minWriterVersion < 7) minWriterVersion = 7; // reader 3 needs writer 7
  return { stored, requested: { minReaderVersion, minWriterVersion, features } };
}

/**
 * Checks a new table's properties the way creating it would, for a pipeline definition to refuse
 * them when it is saved rather than at its first update: the error, or undefined when they are fine.
 */
export function tablePropertiesError(
  configuration: Readonly<Record<string, string>>,
): DeltaError | undefined {
  try {
    validateTableProperties(planProtocolProperties(configuration).stored);
    return undefined;
  } catch (error) {
    if (error instanceof DeltaError) return error;
    throw error;
  }
}

function version(
  key: string,
  value: string,
  valid: readonly number[],
  refused: number | readonly number[],
  feature: string,
): number {
  const n = Number(value);
  if (!Number.isInteger(n) || !valid.includes(n)) {
    throw new InvalidTablePropertyError(key, value, `one of ${valid.join(", ")}`);
  }
  const isRefused = typeof refused === "number" ? n === refused : refused.includes(n);
  if (isRefused) {
    // Reader 2 and writers 5 and 6 are column mapping (and identity columns), which Ebb does not write.
    const name = n === 6 ? "identityColumns" : feature;
    throw new UnsupportedTablePropertyError(
      key,
      value,
      name,
      "ask for version 1 or 3 (reader), up to 4 or 7 (writer)",
    );
  }
  return n;
}
