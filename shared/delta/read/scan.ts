import type { DuckRow, DuckSession } from "../../duck/duck-session.ts";
import { copyToScratch } from "../../duck/scratch-copies.ts";
import type { ScratchFolder } from "../../duck/scratch-folder.ts";
import { readScratchView, ScratchView } from "../../duck/scratch-view.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { SchemaError, UnsupportedFeatureError } from "../errors.ts";
import { fileRelationSql, type FileSource, type RelationColumn } from "./file-relation.ts";
import { dataFileKey } from "../log/data-file-paths.ts";
import { partitionValueSql, type PartitionValueOptions } from "../table/partition-values.ts";
import { assertReadable } from "../table/reader-features.ts";
import { duckType, isScalarType, parseSchema, type ScalarType, type StructType } from "../table/schema.ts";
import type { Snapshot } from "./snapshot.ts";
import { vacuumedFilesError } from "./vacuumed-files.ts";

export interface TableScanOptions {
  /** Session to register the view in; when absent the scan opens its own and closes it on `close()`. */
  readonly duck?: DuckSession;
  /** Name of the DuckDB view holding the table's rows (default `delta_table`). */
  readonly viewName?: string;
  /** Zone of timestamp partition values written without an offset (see `PartitionValueOptions`). */
  readonly partitionTimeZone?: string;
}

/**
 * The rows of a snapshot as a DuckDB view: live data files fetched through the store into a
 * private scratch folder, columns cast to the schema of `metaData.schemaString`, partition values
 * added back as typed columns. Keep the view open while querying it; `close()` drops the files.
 */
export async function openTableScan(
  store: ObjectStore,
  snapshot: Snapshot,
  options: TableScanOptions = {},
): Promise<ScratchView> {
  assertReadable(snapshot.protocol, snapshot.metadata);
  return ScratchView.create(
    options.viewName ?? "delta_table",
    (duck, scratch) => snapshotRelationSql(store, snapshot, duck, scratch, options),
    options.duck,
  );
}

/** All rows of `snapshot` (a convenience over `openTableScan` for small tables and tests). */
export async function scanRows(
  store: ObjectStore,
  snapshot: Snapshot,
  options: Pick<TableScanOptions, "partitionTimeZone"> = {},
): Promise<DuckRow[]> {
  assertReadable(snapshot.protocol, snapshot.metadata);
  return readScratchView("delta_table", (duck, scratch) =>
    snapshotRelationSql(store, snapshot, duck, scratch, options),
  );
}

/** The table's columns in schema order, partition columns taken from each file's partition values. */
export function tableColumns(snapshot: Snapshot): { schema: StructType; columns: RelationColumn[] } {
  const schema = parseSchema(snapshot.metadata.schemaString);
  const partitions = new Set(snapshot.metadata.partitionColumns);
  const columns = schema.fields.map((field): RelationColumn => ({
    name: field.name,
    sqlType: duckType(field.type),
    source: partitions.has(field.name) ? "constant" : "physical",
  }));
  return { schema, columns };
}

/** The partition value expressions of one file, per partition column (PROTOCOL.md "Partition Value Serialization"). */
export function partitionConstants(
  schema: StructType,
  partitionColumns: readonly string[],
  partitionValues: Readonly<Record<string, string | null>>,
  options: PartitionValueOptions = {},
): Record<string, string> {
  const constants: Record<string, string> = {};
  for (const column of partitionColumns) {
    const field = schema.fields.find((f) => f.name === column);
    if (!field || !isScalarType(field.type)) {
      throw new SchemaError(`partition column ${column} is not a primitive column of the schema`);
    }
    constants[column] = partitionValueSql(
      field.type as ScalarType,
      lookup(partitionValues, column),
      column,
      options,
    );
  }
  return constants;
}

async function snapshotRelationSql(
  store: ObjectStore,
  snapshot: Snapshot,
  duck: DuckSession,
  scratch: ScratchFolder,
  options: Pick<TableScanOptions, "partitionTimeZone">,
): Promise<string> {
  const { schema, columns } = tableColumns(snapshot);
  const timeZone = options.partitionTimeZone === undefined ? {} : { timeZone: options.partitionTimeZone };
  const files = [...snapshot.files.values()];
  for (const file of files) {
    if (file.deletionVector) {
      throw new UnsupportedFeatureError("deletionVectors", `data file ${file.path} has a deletion vector`);
    }
  }
  const localPaths = await copyToScratch(
    store,
    files.map((file) => dataFileKey(file.path)),
    scratch,
    ".parquet",
    vacuumedFilesError(
      "snapshot",
      snapshot,
      files.map((file) => ({ path: file.path, version: snapshot.version })),
    ),
  );
  const sources: FileSource[] = files.map((file, i) => ({
    localPath: localPaths[i]!,
    constants: partitionConstants(schema, snapshot.metadata.partitionColumns, file.partitionValues, timeZone),
  }));
  return fileRelationSql(duck, sources, columns);
}

/** Partition keys match column names case-insensitively, like column names themselves. */
function lookup(values: Readonly<Record<string, string | null>>, column: string): string | null | undefined {
  if (column in values) return values[column];
  const lower = column.toLowerCase();
  const key = Object.keys(values).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : values[key];
}
