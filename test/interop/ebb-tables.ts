import {
  ChangeFeedSchemaChangeError,
  DeltaTable,
  duckType,
  loadSnapshot,
  openChangeFeed,
  openTableScan,
  parseSchema,
  type StructType,
} from "../../shared/delta/index.ts";
import type { DuckSession } from "../../shared/duck/duck-session.ts";
import { ScratchFolder } from "../../shared/duck/scratch-folder.ts";
import { quoteIdentifier } from "../../shared/duck/sql-text.ts";
import { appendBatch } from "../../shared/engine/table-sink.ts";
import type { ObjectStore } from "../../shared/object-store/object-store.ts";

/**
 * The shapes of table Ebb writes that the interop suite hands to other engines, and Ebb's own view
 * of each (rows at every version, history, change feed) that theirs must equal. Values are compared
 * as text made by the same SQL on both sides (DuckDB over Ebb's scan, DuckDB over the engine's Arrow
 * table; interop_canonical.py).
 */

export const schema: StructType = {
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: false, metadata: {} },
    { name: "name", type: "string", nullable: true, metadata: {} },
    { name: "score", type: "double", nullable: true, metadata: {} },
    { name: "n", type: "integer", nullable: true, metadata: {} },
    { name: "flag", type: "boolean", nullable: true, metadata: {} },
    { name: "day", type: "date", nullable: true, metadata: {} },
    { name: "at", type: "timestamp", nullable: true, metadata: {} },
    { name: "amount", type: { type: "decimal", precision: 38, scale: 6 }, nullable: true, metadata: {} },
    { name: "big", type: "long", nullable: true, metadata: {} },
  ],
};

/** Rows `from..to` of `schema`, with values past 2^53 and at the types' edges. */
export function rowsSql(from: number, to: number, salt = 0): string {
  return (
    `SELECT i::BIGINT AS id, 'name-' || (i % 3) AS name, (i * 1.5 + ${salt})::DOUBLE AS score, ` +
    `(i % 4)::INTEGER AS n, (i % 2 = 0) AS flag, DATE '2026-01-01' + (i % 5)::INTEGER AS day, ` +
    `TIMESTAMPTZ '2026-01-01 00:00:00.123456+00' + to_seconds(i * 3600) AS "at", ` +
    `('12345678901234567890123456789012.' || lpad((i * 7)::VARCHAR, 6, '0'))::DECIMAL(38,6) AS amount, ` +
    `(9223372036854775000 + i)::BIGINT AS big FROM range(${from}, ${to}) r(i)`
  );
}

/** Values of `big` (9223372036854775000 + id) in the "create and append" table, one row each. */
export const BIG_LOOKUPS = ["9223372036854775000", "9223372036854775010", "9223372036854775020"];

/** SQL giving each column as canonical text; `{t}` is the relation. */
export function canonicalSelect(table: StructType, extra: readonly string[] = []): string {
  const columns = table.fields.map(
    (f) => `CAST(CAST(${quoteIdentifier(f.name)} AS ${duckType(f.type)}) AS VARCHAR)`,
  );
  return `SELECT ${[...columns, ...extra].join(", ")} FROM {t}`;
}
export const CDF_EXTRA = [
  "_change_type",
  "CAST(_commit_version AS BIGINT)::VARCHAR",
  "CAST(epoch_ms(_commit_timestamp) AS BIGINT)::VARCHAR",
];

export const sortRows = (rows: readonly unknown[][]) =>
  rows.map((row) => JSON.stringify(row)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

export interface Shape {
  readonly name: string;
  readonly partitionColumns?: readonly string[];
  readonly properties?: Readonly<Record<string, string>>;
  /** Builds the table's versions. */
  build(table: DeltaTable, on: ShapeContext): Promise<void>;
}

/** What a shape's build may use besides the table handle. */
export interface ShapeContext {
  readonly duck: DuckSession;
  readonly store: ObjectStore;
}

/**
 * Appends `sql` the way a streaming table's flow does (the engine's sink, with a txn marker): a query
 * with more columns than the table evolves its schema in the same commit.
 */
async function flowBatch(on: ShapeContext, seq: number, sql: string): Promise<void> {
  const scratch = await ScratchFolder.create("ebb-interop-");
  try {
    await appendBatch(
      { store: on.store, name: "evolving" },
      { duck: on.duck, scratch, clock: Date.now },
      sql,
      { appId: "interop/flow", version: seq },
    );
  } finally {
    await scratch.dispose();
  }
}

const CDF = { "delta.enableChangeDataFeed": "true" };

export const SHAPES: readonly Shape[] = [
  {
    name: "create and append",
    build: async (t) => {
      await t.append({ sql: rowsSql(10, 20) });
      await t.append({ sql: rowsSql(20, 21) });
    },
  },
  {
    name: "overwrite",
    build: async (t) => {
      await t.overwrite({ sql: rowsSql(100, 105) });
      await t.append({ sql: rowsSql(105, 107) });
    },
  },
  {
    name: "partitioned by string, long, date",
    partitionColumns: ["name", "n", "day"],
    build: async (t) => {
      await t.append({ sql: rowsSql(10, 30) });
      await t.append({
        sql: `SELECT * REPLACE (NULL::VARCHAR AS name, NULL::DATE AS day) FROM (${rowsSql(30, 33)})`,
      });
    },
  },
  {
    name: "partitioned by timestamp, boolean, decimal, double",
    partitionColumns: ["at", "flag", "amount", "score"],
    build: async (t) => {
      await t.append({ sql: rowsSql(10, 14) });
      await t.append({
        sql: `SELECT * REPLACE (NULL::TIMESTAMPTZ AS "at", NULL::DOUBLE AS score) FROM (${rowsSql(14, 15)})`,
      });
    },
  },
  {
    name: "MERGE, DELETE, UPDATE with the change data feed",
    properties: CDF,
    build: async (t) => {
      await t.merge({
        source: { sql: rowsSql(5, 15, 100) },
        on: ["id"],
        whenMatched: { update: "all" },
        whenNotMatched: "insert",
      });
      await t.delete("id % 3 = 0");
      await t.update({ set: { name: "'updated'" }, where: "id % 3 = 1" });
      await t.merge({ source: { sql: rowsSql(1, 4) }, on: ["id"], whenMatched: "delete" });
    },
  },
  {
    name: "RESTORE and VACUUM",
    properties: CDF,
    build: async (t) => {
      await t.append({ sql: rowsSql(10, 12) });
      await t.delete("id < 5");
      await t.restore({ to: { version: 1 } });
      await t.vacuum({ retentionHours: 0, allowShortRetention: true, protectedVersions: [3] });
      await t.append({ sql: rowsSql(50, 52) });
    },
  },
  {
    name: "OPTIMIZE and auto-compaction",
    properties: { ...CDF, "delta.autoOptimize.autoCompact": "true", "ebb.autoCompact.minNumFiles": "3" },
    build: async (t) => {
      for (let i = 0; i < 4; i++) await t.append({ sql: rowsSql(200 + i, 201 + i) }); // compacts at the 3rd file
      await t.optimize();
      await t.delete("id = 201");
    },
  },
  {
    name: "checkpoints, then log cleanup",
    properties: {
      ...CDF,
      "delta.checkpointInterval": "2",
      "delta.logRetentionDuration": "interval 0 seconds",
    },
    build: async (t) => {
      for (let i = 0; i < 5; i++) await t.append({ sql: rowsSql(100 + i, 101 + i) });
      await t.checkpoint();
      await t.update({ set: { n: "n + 1" }, where: "id > 102" });
    },
  },
  {
    name: "schema evolution, then RESTORE to before it",
    properties: CDF,
    build: async (t, on) => {
      await flowBatch(on, 1, `SELECT *, 'x-' || id AS extra FROM (${rowsSql(10, 13)})`);
      await flowBatch(
        on,
        2,
        `SELECT *, 'y-' || id AS extra, (id * 2)::INTEGER AS more FROM (${rowsSql(13, 15)})`,
      );
      await t.refresh();
      await t.update({ set: { extra: "'changed'" }, where: "id < 3 OR id = 13" });
      await t.restore({ to: { version: 0 } });
      await t.append({ sql: rowsSql(60, 62) });
    },
  },
];

export interface HistoryRow {
  readonly version: number;
  readonly timestamp: number;
  readonly operation: string | undefined;
}

/** Ebb's own view of a table, which another engine's must equal. */
export interface Expected {
  /** Sorted canonical rows of every version Ebb can read. */
  readonly versions: Record<string, string[]>;
  /** The canonical SELECT of each version (its schema's columns). */
  readonly selects: Record<string, string>;
  readonly history: HistoryRow[];
  /** Sorted canonical change rows from `cdfFrom` on, with CDF_EXTRA's columns. */
  readonly cdf: string[] | null;
  readonly cdfSelect: string;
  readonly cdfFrom: number;
  /**
   * Ebb's refusal of the change feed from an earlier version (a schema change that is not additive
   * after it): from where, and the ranges before `cdfFrom` the refusal names, each read in its end
   * version's schema (`cdfFrom` starts the last of them).
   */
  readonly cdfRefused: {
    readonly from: number;
    readonly pieces: readonly {
      readonly from: number;
      readonly to: number;
      readonly select: string;
      readonly rows: string[];
    }[];
  } | null;
}

/** Creates `shape` in `store` (ten rows at version 0) and runs its build. */
export async function writeShape(duck: DuckSession, store: ObjectStore, shape: Shape): Promise<DeltaTable> {
  const table = await DeltaTable.create(
    store,
    {
      schema,
      ...(shape.partitionColumns ? { partitionColumns: shape.partitionColumns } : {}),
      ...(shape.properties ? { properties: shape.properties } : {}),
      rows: { sql: rowsSql(0, 10) },
    },
    { duck },
  );
  try {
    await shape.build(table, { duck, store });
    await table.refresh();
    return table;
  } catch (error) {
    await table.close();
    throw error;
  }
}

/** Ebb's view of a table: rows at every version it can read, history, change feed (if enabled). */
export async function ebbView(duck: DuckSession, store: ObjectStore, table: DeltaTable): Promise<Expected> {
  const latest = table.snapshot.version;
  const versions: Record<string, string[]> = {};
  const selects: Record<string, string> = {};
  let earliest = latest;
  for (let version = latest; version >= 0; version--) {
    try {
      const snapshot = await loadSnapshot(store, { version });
      const select = canonicalSelect(parseSchema(snapshot.metadata.schemaString));
      const view = await openTableScan(store, snapshot, { duck, viewName: `scan_${version}` });
      try {
        versions[String(version)] = sortRows(await rowsOf(duck, select, `scan_${version}`));
        selects[String(version)] = select;
      } finally {
        await view.close();
      }
    } catch {
      break; // before the log's start (cleaned up) or past VACUUM: Ebb cannot read it either
    }
    earliest = version;
  }
  const history = (await table.history()).map((h) => ({
    version: h.version,
    timestamp: h.timestamp,
    operation: h.operation,
  }));
  const cdfSelect = canonicalSelect(parseSchema(table.snapshot.metadata.schemaString), CDF_EXTRA);
  const cdf = table.snapshot.metadata.configuration["delta.enableChangeDataFeed"] === "true";
  let changes: string[] | null = null;
  let refused: ChangeFeedSchemaChangeError | undefined;
  // The change feed from the earliest version whose change files VACUUM left; refused across a
  // schema change that is not additive, then from the start of the last range the refusal names.
  let cdfFrom = Math.max(1, earliest);
  while (cdf && cdfFrom <= latest) {
    try {
      changes = await ebbChanges(duck, store, cdfFrom, cdfSelect);
      break;
    } catch (error) {
      if (!(error instanceof ChangeFeedSchemaChangeError)) {
        cdfFrom++; // VACUUM removed a file this version's changes are in
        continue;
      }
      refused ??= error;
      cdfFrom = Math.max(cdfFrom + 1, error.ranges.at(-1)![0]);
    }
  }
  const pieces = [];
  for (const [from, to] of refused?.ranges.slice(0, -1) ?? []) {
    const snapshot = await loadSnapshot(store, { version: to });
    const select = canonicalSelect(parseSchema(snapshot.metadata.schemaString), CDF_EXTRA);
    pieces.push({ from, to, select, rows: await ebbChanges(duck, store, from, select, to) });
  }
  const cdfRefused = refused ? { from: refused.fromVersion, pieces } : null;
  return { versions, selects, history, cdf: changes, cdfSelect, cdfFrom, cdfRefused };
}

/** Ebb's change feed from `from` to `to` (the latest version), as sorted canonical rows of `select`. */
export async function ebbChanges(
  duck: DuckSession,
  store: ObjectStore,
  from: number,
  select: string,
  to?: number,
): Promise<string[]> {
  const view = await openChangeFeed(store, from, to, { duck, viewName: "changes" });
  try {
    return sortRows(await rowsOf(duck, select, "changes"));
  } finally {
    await view.close();
  }
}

export async function rowsOf(duck: DuckSession, select: string, relation: string): Promise<unknown[][]> {
  const rows = await duck.rows(select.replace("{t}", relation));
  return rows.map((row) => Object.values(row));
}
