import { DuckSession, type DuckRow } from "../duck/duck-session.ts";
import { copyToScratch } from "../duck/scratch-copies.ts";
import { ScratchFolder } from "../duck/scratch-folder.ts";
import { quoteIdentifier } from "../duck/sql-text.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { SchemaError, UnsupportedFeatureError } from "./errors.ts";
import { fileRelationSql, type FileSource, type RelationColumn } from "./file-relation.ts";
import { decodeLogPath } from "./log-replay.ts";
import { partitionValueSql } from "./partition-values.ts";
import { assertReadable } from "./reader-features.ts";
import { duckType, isScalarType, parseSchema, type ScalarType, type StructType } from "./schema.ts";
import type { Snapshot } from "./snapshot.ts";

export interface TableScanOptions {
  /** Session to register the view in; when absent the scan opens its own and closes it on `close()`. */
  readonly duck?: DuckSession;
  /** Name of the DuckDB view holding the table's rows (default `delta_table`). */
  readonly viewName?: string;
}

/**
 * The rows of a snapshot as a DuckDB view: live data files fetched through the store into a
 * private scratch folder, columns cast to the schema of `metaData.schemaString`, partition values
 * added back as typed columns. Keep it open while querying the view; `close()` drops the files.
 */
export class TableScan {
  private constructor(
    readonly duck: DuckSession,
    readonly viewName: string,
    private readonly scratch: ScratchFolder,
    private readonly ownsSession: boolean,
  ) {}

  static async open(
    store: ObjectStore,
    snapshot: Snapshot,
    options: TableScanOptions = {},
  ): Promise<TableScan> {
    assertReadable(snapshot.protocol, snapshot.metadata);
    const duck = options.duck ?? (await DuckSession.open());
    const scratch = await ScratchFolder.create();
    const scan = new TableScan(duck, options.viewName ?? "delta_table", scratch, options.duck === undefined);
    try {
      const sql = await snapshotRelationSql(store, snapshot, duck, scratch);
      await duck.run(`CREATE OR REPLACE TEMP VIEW ${quoteIdentifier(scan.viewName)} AS ${sql}`);
      return scan;
    } catch (error) {
      await scan.close();
      throw error;
    }
  }

  /** Every row of the view, as plain JS objects. */
  async rows(): Promise<DuckRow[]> {
    return this.duck.rows(`SELECT * FROM ${quoteIdentifier(this.viewName)}`);
  }

  async close(): Promise<void> {
    try {
      if (this.ownsSession) this.duck.close();
      else await this.duck.run(`DROP VIEW IF EXISTS ${quoteIdentifier(this.viewName)}`);
    } finally {
      await this.scratch.dispose();
    }
  }
}

/** All rows of `snapshot` (a convenience over `TableScan` for small tables and tests). */
export async function scanRows(store: ObjectStore, snapshot: Snapshot): Promise<DuckRow[]> {
  const scan = await TableScan.open(store, snapshot);
  try {
    return await scan.rows();
  } finally {
    await scan.close();
  }
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
): Record<string, string> {
  const constants: Record<string, string> = {};
  for (const column of partitionColumns) {
    const field = schema.fields.find((f) => f.name === column);
    if (!field || !isScalarType(field.type)) {
      throw new SchemaError(`partition column ${column} is not a primitive column of the schema`);
    }
    constants[column] = partitionValueSql(field.type as ScalarType, lookup(partitionValues, column), column);
  }
  return constants;
}

/** The storage key of a data file named by a log `path`; absolute URIs are not read. */
export function dataFileKey(path: string): string {
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(path)) {
    throw new UnsupportedFeatureError("absolutePaths", `data file ${path} is outside the table folder`);
  }
  return decodeLogPath(path);
}

async function snapshotRelationSql(
  store: ObjectStore,
  snapshot: Snapshot,
  duck: DuckSession,
  scratch: ScratchFolder,
): Promise<string> {
  const { schema, columns } = tableColumns(snapshot);
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
  );
  const sources: FileSource[] = files.map((file, i) => ({
    localPath: localPaths[i]!,
    constants: partitionConstants(schema, snapshot.metadata.partitionColumns, file.partitionValues),
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
