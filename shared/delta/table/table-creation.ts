import { randomUUID } from "node:crypto";
import type { Action, Metadata, Protocol } from "../log/actions.ts";
import type { OperationDescription } from "../commit/commit-info.ts";
import { SchemaMismatchError } from "../errors.ts";
import { isScalarType, parseSchema, type DeltaType, type StructField, type StructType } from "./schema.ts";
import { serializeSchema } from "./schema-serialization.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { planProtocolProperties, type RequestedProtocol } from "./protocol-properties.ts";
import { TABLE_PROPERTY, tableProperties, validateTableProperties } from "./table-properties.ts";

/**
 * Creating a table: version 0 holds the `protocol` and the `metaData` (PROTOCOL.md "Change
 * Metadata", "Protocol Evolution"). Ebb asks for the least a reader and writer must support: reader 1,
 * writer 2 (append-only tables and column invariants), or writer 4 when the change data feed is on
 * (PROTOCOL.md "Writer Version Requirements"); writer 7 with the `inCommitTimestamp` feature (on unless
 * the properties turn it off); reader 3 / writer 7 with the `timestampNtz` feature when a column is a
 * `timestamp_ntz`; more when the properties ask for it. No column mapping, no
 * deletion vectors: properties that would turn them on are refused (protocol-properties.ts).
 */
export interface TableDefinition {
  /** The schema (`schema.ts` types; serialized per PROTOCOL.md "Schema Serialization Format"). */
  readonly schema: StructType;
  readonly partitionColumns?: readonly string[];
  /** `metaData.configuration`, e.g. `delta.enableChangeDataFeed`, `delta.checkpointInterval`. */
  readonly properties?: Readonly<Record<string, string>>;
  readonly name?: string;
  readonly description?: string;
}

/**
 * The protocol a table with `configuration` and `schema` needs, raised to what `requested` asks
 * (protocol-properties.ts). Legacy versions while they suffice: writer 2, or 4 with the change data
 * feed. A `timestamp_ntz` column needs the `timestampNtz` table feature (PROTOCOL.md "Timestamp
 * without timezone"), as does a request for writer 7 or any `delta.feature.*`: then reader 3 (when a
 * reader-writer feature is listed, or asked for) / writer 7, listing every feature the table uses
 * or asked for (writer 7 implies none).
 */
export function minimalProtocol(
  configuration: Readonly<Record<string, string>>,
  schema: StructType,
  requested: RequestedProtocol = { minReaderVersion: 1, minWriterVersion: 1, features: [] },
): Protocol {
  const properties = tableProperties({ configuration });
  const features = new Set(requested.features);
  if (properties.appendOnly) features.add("appendOnly");
  if (properties.changeDataFeed) features.add("changeDataFeed");
  if (usesTimestampNtz(schema.fields)) features.add("timestampNtz");
  if (properties.inCommitTimestamps) features.add("inCommitTimestamp");
  const needsFeatures =
    features.has("timestampNtz") ||
    features.has("inCommitTimestamp") ||
    requested.features.length > 0 ||
    requested.minWriterVersion === 7;
  if (!needsFeatures) {
    const legacy = properties.changeDataFeed ? 4 : 2;
    return {
      minReaderVersion: requested.minReaderVersion,
      minWriterVersion: Math.max(legacy, requested.minWriterVersion),
    };
  }
  // Spark counts a NOT NULL column as an invariant: a writer-7 table must list the feature, or
  // Spark refuses to read it (DELTA_FEATURES_PROTOCOL_METADATA_MISMATCH).
  if (hasNotNull(schema.fields)) features.add("invariants");
  const writerFeatures = [...features].sort();
  const readerFeatures = writerFeatures.filter((feature) => READER_WRITER_FEATURES.has(feature));
  if (readerFeatures.length === 0 && requested.minReaderVersion < 3) {
    return { minReaderVersion: requested.minReaderVersion, minWriterVersion: 7, writerFeatures };
  }
  return { minReaderVersion: 3, minWriterVersion: 7, readerFeatures, writerFeatures };
}

/** Of the features Ebb may list, those readers must support too (PROTOCOL.md "Table Features"). */
const READER_WRITER_FEATURES: ReadonlySet<string> = new Set(["timestampNtz"]);

/** The first NOT NULL struct field inside an array element or a map key or value, as a path. */
function notNullInsideCollection(
  fields: readonly StructField[],
  parent = "",
  inside = false,
): string | undefined {
  const inType = (type: DeltaType, path: string, collection: boolean): string | undefined => {
    if (typeof type === "string") return undefined;
    if (type.type === "struct") return notNullInsideCollection(type.fields, path, collection);
    if (type.type === "array") return inType(type.elementType, `${path}.element`, true);
    if (type.type === "map")
      return inType(type.keyType, `${path}.key`, true) ?? inType(type.valueType, `${path}.value`, true);
    return undefined;
  };
  for (const field of fields) {
    const path = parent === "" ? field.name : `${parent}.${field.name}`;
    if (inside && !field.nullable) return path;
    const found = inType(field.type, path, inside);
    if (found) return found;
  }
  return undefined;
}

function hasNotNull(fields: readonly StructField[]): boolean {
  const inType = (type: DeltaType): boolean => {
    if (typeof type === "string") return false;
    if (type.type === "struct") return hasNotNull(type.fields);
    if (type.type === "array") return inType(type.elementType);
    if (type.type === "map") return inType(type.keyType) || inType(type.valueType);
    return false;
  };
  return fields.some((field) => !field.nullable || inType(field.type));
}

function usesTimestampNtz(fields: readonly StructField[]): boolean {
  const inType = (type: DeltaType): boolean => {
    if (typeof type === "string") return type === "timestamp_ntz";
    if (type.type === "struct") return usesTimestampNtz(type.fields);
    if (type.type === "array") return inType(type.elementType);
    if (type.type === "map") return inType(type.keyType) || inType(type.valueType);
    return false;
  };
  return fields.some((field) => inType(field.type));
}

/** Validates the definition and returns the `protocol` and `metaData` of version 0. */
export function planTableCreation(
  definition: TableDefinition,
  now: number,
  id: string = randomUUID(),
): { protocol: Protocol; metadata: Metadata } {
  const schemaString = serializeSchema(definition.schema);
  const schema = parseSchema(schemaString);
  const names = schema.fields.map((f) => f.name.toLowerCase());
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate)
    throw new SchemaMismatchError(`column ${duplicate} appears twice (names are case-insensitive)`);
  const unenforceable = notNullInsideCollection(schema.fields);
  if (unenforceable) {
    throw new SchemaMismatchError(
      `field ${unenforceable} is NOT NULL inside an array or map, which Delta does not enforce: make it nullable`,
    );
  }
  const partitionColumns = [...(definition.partitionColumns ?? [])];
  for (const column of partitionColumns) {
    const field = schema.fields.find((f) => f.name === column);
    if (!field || !isScalarType(field.type)) {
      throw new SchemaMismatchError(`partition column ${column} must be a primitive column of the schema`);
    }
  }
  if (partitionColumns.length === schema.fields.length && partitionColumns.length > 0) {
    throw new SchemaMismatchError("a table needs at least one column that is not a partition column");
  }
  const { stored, requested } = planProtocolProperties(definition.properties ?? {});
  const configuration = withInCommitTimestamps(stored);
  validateTableProperties(configuration);
  return {
    protocol: minimalProtocol(configuration, schema, requested),
    metadata: {
      id,
      ...(definition.name !== undefined ? { name: definition.name } : {}),
      ...(definition.description !== undefined ? { description: definition.description } : {}),
      format: { provider: "parquet", options: {} },
      schemaString,
      partitionColumns,
      createdTime: now,
      configuration,
    },
  };
}

/**
 * A new table records in-commit timestamps from version 0 unless its properties turn them off: its
 * commit times are then exact and the same in every engine (Spark and the protocol otherwise date a
 * commit by its file's modification time, which a copy of the table loses). Enabled at creation, the
 * table needs no enablement version or timestamp (PROTOCOL.md "Writer Requirements for In-Commit
 * Timestamps", item 4).
 */
function withInCommitTimestamps(configuration: Readonly<Record<string, string>>): Record<string, string> {
  return { [TABLE_PROPERTY.enableInCommitTimestamps]: "true", ...configuration };
}

/** `CREATE TABLE` as Delta records it in `commitInfo`. */
export function createTableOperation(definition: TableDefinition, metadata: Metadata): OperationDescription {
  return {
    operation: "CREATE TABLE",
    operationParameters: {
      isManaged: "false",
      description: definition.description ?? null,
      partitionBy: JSON.stringify(metadata.partitionColumns),
      properties: JSON.stringify(metadata.configuration),
    },
    isBlindAppend: true,
  };
}

/** The `protocol` + `metaData` actions of version 0. */
export function creationActions(created: { protocol: Protocol; metadata: Metadata }): Action[] {
  return [{ protocol: created.protocol }, { metaData: created.metadata }];
}

/**
 * A snapshot of the table about to be created (version -1, no files), so that the first write can
 * be planned like any other before version 0 exists.
 */
export function draftSnapshot(created: { protocol: Protocol; metadata: Metadata }): Snapshot {
  return {
    version: -1,
    protocol: created.protocol,
    metadata: created.metadata,
    files: new Map(),
    commitTombstones: new Map(),
    txns: new Map(),
    timestamp: Number.NEGATIVE_INFINITY,
  };
}
