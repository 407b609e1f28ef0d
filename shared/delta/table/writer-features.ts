import type { Metadata, Protocol } from "../log/actions.ts";
import { UnsupportedFeatureError } from "../errors.ts";
import { assertReadable } from "./reader-features.ts";
import { parseSchema, type DeltaType, type StructField } from "./schema.ts";
import { validateTableProperties } from "./table-properties.ts";

/**
 * What this writer implements (PROTOCOL.md "Writer Version Requirements", "Table Features"), so that
 * it refuses, by name, to write a table written by Spark or delta-rs with a feature it would break:
 *
 * - writer 2: append-only tables (enforced) and column invariants (refused when a column has one);
 * - writer 3: CHECK constraints (refused when the table has one: their Spark SQL is not DuckDB's);
 * - writer 4: the change data feed (written) and generated columns (refused when a column has one);
 * - writer 5 and 6 (column mapping, identity columns) are refused;
 * - writer 7 with only the writer features listed here, under the same conditions;
 * - and table properties it obeys, with values it can honour (a value it cannot, such as Spark's
 *   `delta.checkpoint.writeStatsAsStruct=true`, is refused before anything is written, not after the
 *   commit when the post-commit checkpoint reads it).
 */
const SUPPORTED_WRITER_FEATURES: ReadonlySet<string> = new Set([
  "appendOnly",
  "invariants",
  "checkConstraints",
  "changeDataFeed",
  "generatedColumns",
  "timestampNtz",
  // Written on every commit of a table that enables it (commit/commit.ts).
  "inCommitTimestamp",
  // VACUUM checks the writer protocol first (operations/vacuum.ts).
  "vacuumProtocolCheck",
]);

/**
 * Throws `UnsupportedFeatureError` naming the first feature Ebb cannot write correctly, or
 * `InvalidTablePropertyError` naming a property it cannot honour.
 */
export function assertWritable(protocol: Protocol, metadata: Metadata): void {
  assertReadable(protocol, metadata);
  validateTableProperties(metadata.configuration);
  const version = protocol.minWriterVersion;
  if (version === 5 || version === 6 || version > 7 || version < 1) {
    throw new UnsupportedFeatureError(
      `writerVersion ${version}`,
      "Ebb writes writer versions 1 to 4, and 7 with its features",
    );
  }
  if (version === 7) {
    for (const feature of protocol.writerFeatures ?? []) {
      if (!SUPPORTED_WRITER_FEATURES.has(feature)) {
        throw new UnsupportedFeatureError(feature, "the table requires this writer feature");
      }
    }
  }
  const constraint = Object.keys(metadata.configuration).find((key) => key.startsWith("delta.constraints."));
  if (constraint)
    throw new UnsupportedFeatureError("checkConstraints", `the table has CHECK constraint ${constraint}`);
  for (const field of allFields(parseSchema(metadata.schemaString).fields)) {
    if (field.metadata["delta.invariants"] !== undefined) {
      throw new UnsupportedFeatureError("invariants", `column ${field.name} has an invariant`);
    }
    if (field.metadata["delta.generationExpression"] !== undefined) {
      throw new UnsupportedFeatureError("generatedColumns", `column ${field.name} is generated`);
    }
  }
}

function* allFields(fields: readonly StructField[]): Generator<StructField> {
  for (const field of fields) {
    yield field;
    yield* nestedFields(field.type);
  }
}

function* nestedFields(type: DeltaType): Generator<StructField> {
  if (typeof type === "string") return;
  if (type.type === "struct") yield* allFields(type.fields);
  else if (type.type === "array") yield* nestedFields(type.elementType);
  else if (type.type === "map") {
    yield* nestedFields(type.keyType);
    yield* nestedFields(type.valueType);
  }
}
