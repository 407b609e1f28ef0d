import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DeltaTable,
  loadSnapshot,
  openChangeFeed,
  openTableScan,
  type StructType,
} from "../../shared/delta/index.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { quoteIdentifier } from "../../shared/duck/sql-text.ts";
import { LocalObjectStore } from "../../shared/store/local-object-store.ts";
import type { ObjectStore } from "../../shared/store/object-store.ts";
import { testAws, testObjectStore, uniquePrefix } from "../support/aws.ts";

/**
 * delta-rs (the `deltalake` Python package) reads every shape of table Ebb writes, at every
 * version Ebb can read, on a local folder and on the S3 stand-in: its rows equal Ebb's scan, its
 * history equals Ebb's history, and its `load_cdf` equals Ebb's change feed. Then the other way:
 * tables delta-rs writes are read by Ebb at every version. Values are compared as text made by the
 * same SQL on both sides (DuckDB over Ebb's scan, DuckDB over delta-rs's Arrow table).
 */

const run = promisify(execFile);
const PYTHON = process.env["EBB_INTEROP_PYTHON"] ?? "python3";
const READER = path.join(import.meta.dirname, "delta_rs_read.py");

const schema: StructType = {
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
function rowsSql(from: number, to: number, salt = 0): string {
  return (
    `SELECT i::BIGINT AS id, 'name-' || (i % 3) AS name, (i * 1.5 + ${salt})::DOUBLE AS score, ` +
    `(i % 4)::INTEGER AS n, (i % 2 = 0) AS flag, DATE '2026-01-01' + (i % 5)::INTEGER AS day, ` +
    `TIMESTAMPTZ '2026-01-01 00:00:00.123456+00' + to_seconds(i * 3600) AS "at", ` +
    `('12345678901234567890123456789012.' || lpad((i * 7)::VARCHAR, 6, '0'))::DECIMAL(38,6) AS amount, ` +
    `(9223372036854775000 + i)::BIGINT AS big FROM range(${from}, ${to}) r(i)`
  );
}

/** Values of `big` (9223372036854775000 + id) in the "create and append" table, one row each. */
const BIG_LOOKUPS = ["9223372036854775000", "9223372036854775010", "9223372036854775020"];

/** SQL giving each column as canonical text; `{t}` is the relation. */
function canonicalSelect(table: StructType, extra: readonly string[] = []): string {
  const columns = table.fields.map((f) => {
    const c = quoteIdentifier(f.name);
    const duck = DUCK_TYPES[String(typeof f.type === "string" ? f.type : "decimal")];
    const typed = typeof f.type === "string" ? `CAST(${c} AS ${duck})` : `CAST(${c} AS DECIMAL(38, 6))`;
    return `CAST(${typed} AS VARCHAR)`;
  });
  return `SELECT ${[...columns, ...extra].join(", ")} FROM {t}`;
}
const DUCK_TYPES: Readonly<Record<string, string>> = {
  long: "BIGINT",
  string: "VARCHAR",
  double: "DOUBLE",
  integer: "INTEGER",
  boolean: "BOOLEAN",
  date: "DATE",
  timestamp: "TIMESTAMPTZ",
  timestamp_ntz: "TIMESTAMP",
};
const CDF_EXTRA = [
  "_change_type",
  "CAST(_commit_version AS BIGINT)::VARCHAR",
  "CAST(epoch_ms(_commit_timestamp) AS BIGINT)::VARCHAR",
];

const sortRows = (rows: readonly unknown[][]) =>
  rows.map((row) => JSON.stringify(row)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

interface Shape {
  readonly name: string;
  readonly partitionColumns?: readonly string[];
  readonly properties?: Readonly<Record<string, string>>;
  /** Builds the table's versions. */
  build(table: DeltaTable): Promise<void>;
}

const CDF = { "delta.enableChangeDataFeed": "true" };

const SHAPES: readonly Shape[] = [
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
];

interface Expected {
  readonly versions: Record<string, string[]>;
  readonly history: { version: number; timestamp: number; operation: string | undefined }[];
  readonly cdf: string[] | null;
  readonly cdfFrom: number;
}

describe("delta-rs reads the tables Ebb writes", () => {
  let duck: DuckSession;
  let folder: string;
  beforeAll(async () => {
    duck = await DuckSession.open();
    await duck.run("SET TimeZone = 'UTC'");
    folder = await mkdtemp(path.join(tmpdir(), "ebb-interop-"));
  });
  afterAll(async () => {
    duck?.close();
    await rm(folder, { recursive: true, force: true });
  });

  /** Ebb's own view of a table: rows at every version it can read, history, change feed. */
  async function ebbView(store: ObjectStore, table: DeltaTable, cdf: boolean): Promise<Expected> {
    const latest = table.snapshot.version;
    const versions: Record<string, string[]> = {};
    let earliest = latest;
    for (let version = latest; version >= 0; version--) {
      try {
        const snapshot = await loadSnapshot(store, { version, duck });
        const view = await openTableScan(store, snapshot, { duck, viewName: `scan_${version}` });
        try {
          versions[String(version)] = sortRows(await rowsOf(canonicalSelect(schema), `scan_${version}`));
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
    let changes: string[] | null = null;
    // The change feed from the earliest version whose change files VACUUM left.
    let cdfFrom = Math.max(1, earliest);
    for (; cdf && cdfFrom <= latest; cdfFrom++) {
      try {
        const view = await openChangeFeed(store, cdfFrom, undefined, { duck, viewName: "changes" });
        try {
          changes = sortRows(await rowsOf(canonicalSelect(schema, CDF_EXTRA), "changes"));
        } finally {
          await view.close();
        }
        break;
      } catch {
        continue;
      }
    }
    return { versions, history, cdf: changes, cdfFrom };
  }

  async function rowsOf(select: string, relation: string): Promise<unknown[][]> {
    const rows = await duck.rows(select.replace("{t}", relation));
    return rows.map((row) => Object.values(row));
  }

  async function deltaRs(request: unknown): Promise<Record<string, DeltaRsView>> {
    const file = path.join(folder, `request-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify(request));
    const { stdout } = await run(PYTHON, [READER, file], { maxBuffer: 256 * 1024 * 1024 });
    return JSON.parse(stdout) as Record<string, DeltaRsView>;
  }

  interface DeltaRsView {
    readonly versions: Record<string, unknown[][]>;
    readonly history: { version: number; timestamp: number; operation: string | undefined }[];
    readonly cdf: unknown[][] | null;
    readonly lookups: Record<string, number>;
    readonly errors: Record<string, string>;
  }

  for (const where of ["local folder", "S3 stand-in"] as const) {
    it(`agrees on rows at every version, history and change feed (${where})`, async () => {
      const started = Date.now();
      const tables: { spec: Record<string, unknown>; expected: Expected }[] = [];
      for (const shape of SHAPES) {
        let store: ObjectStore;
        let uri: string;
        let storageOptions: Record<string, string> | undefined;
        if (where === "local folder") {
          const root = path.join(folder, shape.name.replace(/[^a-z0-9]+/gi, "-"));
          store = new LocalObjectStore(root);
          uri = root;
        } else {
          const aws = testAws();
          const prefix = uniquePrefix("interop");
          store = testObjectStore(prefix);
          uri = `s3://${aws.storage.bucket}/${prefix.replace(/\/$/, "")}`;
          storageOptions = {
            AWS_ENDPOINT_URL: aws.endpoints.s3Endpoint,
            AWS_ACCESS_KEY_ID: aws.endpoints.credentials.accessKeyId,
            AWS_SECRET_ACCESS_KEY: aws.endpoints.credentials.secretAccessKey,
            AWS_REGION: aws.endpoints.region,
            AWS_ALLOW_HTTP: "true",
            AWS_VIRTUAL_HOSTED_STYLE_REQUEST: "false",
          };
        }
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
          await shape.build(table);
          const cdf = shape.properties?.["delta.enableChangeDataFeed"] === "true";
          const expected = await ebbView(store, table, cdf);
          tables.push({
            expected,
            spec: {
              name: shape.name,
              uri,
              storage_options: storageOptions,
              versions: Object.keys(expected.versions).map(Number),
              select: canonicalSelect(schema),
              lookups: shape.name === "create and append" ? BIG_LOOKUPS : [],
              cdf: cdf ? { from: expected.cdfFrom, select: canonicalSelect(schema, CDF_EXTRA) } : null,
            },
          });
        } finally {
          await table.close();
        }
      }
      const ebbDone = Date.now();
      const seen = await deltaRs({ tables: tables.map((t) => t.spec) });
      for (const { spec, expected } of tables) {
        const name = String(spec.name);
        const got = seen[name]!;
        expect(got.errors, name).toEqual({});
        expect(Object.keys(got.versions).sort(), `${name} versions`).toEqual(
          Object.keys(expected.versions).sort(),
        );
        expect(Object.keys(expected.versions).length, `${name} versions`).toBeGreaterThan(0);
        if (name === "create and append") {
          expect(got.lookups).toEqual(Object.fromEntries(BIG_LOOKUPS.map((v) => [v, 1])));
        }
        for (const [version, rows] of Object.entries(expected.versions)) {
          expect(sortRows(got.versions[version]!), `${name} v${version}`).toEqual(rows);
        }
        expect(got.history, `${name} history`).toEqual(expected.history);
        if (expected.cdf) expect(sortRows(got.cdf!), `${name} change feed`).toEqual(expected.cdf);
      }
      console.log(
        `interop delta-rs (${where}): ${tables.length} shapes; Ebb wrote and read them in ` +
          `${ebbDone - started} ms, delta-rs read them in ${Date.now() - ebbDone} ms`,
      );
    });
  }

  it("Ebb reads the tables delta-rs writes at every version", async () => {
    const uri = path.join(folder, "written-by-delta-rs");
    const steps = [
      {
        mode: "append",
        rows: [
          { id: 1, name: "a" },
          { id: 2, name: null },
        ],
      },
      { mode: "append", rows: [{ id: 3, name: "b" }] },
      {
        mode: "overwrite",
        rows: [
          { id: 4, name: "a" },
          { id: 5, name: "c" },
        ],
      },
    ];
    const written: StructType = {
      type: "struct",
      fields: [
        { name: "id", type: "long", nullable: true, metadata: {} },
        { name: "name", type: "string", nullable: true, metadata: {} },
      ],
    };
    for (const partitionBy of [[], ["name"]]) {
      const table = `${uri}-${partitionBy.length}`;
      await deltaRs({
        write: [
          {
            uri: table,
            steps,
            partition_by: partitionBy,
            schema: [
              ["id", "int64"],
              ["name", "string"],
            ],
          },
        ],
      });
      const seen = await deltaRs({
        tables: [{ name: "t", uri: table, versions: [0, 1, 2], select: canonicalSelect(written) }],
      });
      expect(seen.t!.errors).toEqual({});
      const store = new LocalObjectStore(table);
      for (const version of [0, 1, 2]) {
        const snapshot = await loadSnapshot(store, { version, duck });
        const view = await openTableScan(store, snapshot, { duck, viewName: `theirs_${version}` });
        try {
          expect(sortRows(await rowsOf(canonicalSelect(written), `theirs_${version}`))).toEqual(
            sortRows(seen.t!.versions[String(version)]!),
          );
        } finally {
          await view.close();
        }
      }
    }
  });
});
