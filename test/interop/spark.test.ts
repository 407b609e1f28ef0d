import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChangeFeedSchemaChangeError,
  DeltaTable,
  UnsupportedFeatureError,
  findCommitInfo,
  loadSnapshot,
  readCommit,
  openChangeFeed,
  openTableScan,
} from "../../shared/delta/index.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";
import {
  ebbChanges,
  ebbView,
  type Expected,
  type HistoryRow,
  rowsOf,
  rowsSql,
  schema,
  SHAPES,
  sortRows,
  writeShape,
} from "./ebb-tables.ts";
import { PIPELINE_RUNS } from "./pipeline-runs.ts";
import { SparkDriver } from "./spark-driver.ts";
import { testAws, testObjectStore, uniquePrefix } from "../support/aws.ts";

/**
 * Spark with Delta Lake (pyspark and delta-spark, one JVM for the whole file) reads every shape of
 * table Ebb writes at its latest version and around each RESTORE (delta-rs reads every
 * version): its rows equal Ebb's scan, DESCRIBE HISTORY equals Ebb's history,
 * and readChangeFeed and table_changes equal Ebb's change feed. Then the other way: tables Spark
 * writes (append, overwrite, partitioned, MERGE, DELETE, UPDATE, checkpoints, schema evolution, the
 * change data feed) are read by Ebb at every version equal to Spark's own reads.
 */

const PYTHON = process.env["EBB_INTEROP_PYTHON"] ?? "python3";
const JARS = process.env["EBB_INTEROP_SPARK_JARS"] ?? path.resolve(".ebb/interop-jars");

interface SparkView {
  readonly versions: Record<string, unknown[][]>;
  readonly history: HistoryRow[];
  readonly cdf: unknown[][] | null;
  readonly table_changes: unknown[][] | null;
  readonly errors: Record<string, string>;
}

/** `delta.\`path\``: Spark SQL's name for the Delta table at a path. */
const at = (uri: string) => `delta.\`${uri.replaceAll("`", "``")}\``;

/** Spark SQL rows `from..to` of the suite's schema (ebb-tables.ts rowsSql, in Spark's dialect). */
function sparkRows(from: number, to: number, salt = 0): string {
  return (
    `SELECT id, concat('name-', CAST(id % 3 AS STRING)) AS name, CAST(id * 1.5 + ${salt} AS DOUBLE) AS score, ` +
    `CAST(id % 4 AS INT) AS n, id % 2 = 0 AS flag, date_add(DATE'2026-01-01', CAST(id % 5 AS INT)) AS day, ` +
    `TIMESTAMP'2026-01-01 00:00:00.123456' + make_dt_interval(0, CAST(id AS INT), 0, 0) AS at, ` +
    `CAST(concat('12345678901234567890123456789012.', lpad(CAST(id * 7 AS STRING), 6, '0')) AS DECIMAL(38,6)) AS amount, ` +
    `9223372036854775000 + id AS big FROM range(${from}, ${to})`
  );
}
/** A change row as canonical text: id, name, change type, commit version. */
const STREAM_SELECT =
  "SELECT CAST(id AS VARCHAR), name, _change_type, CAST(_commit_version AS BIGINT)::VARCHAR FROM {t}";

const COLUMNS =
  "id BIGINT NOT NULL, name STRING, score DOUBLE, n INT, flag BOOLEAN, day DATE, at TIMESTAMP, " +
  "amount DECIMAL(38,6), big BIGINT";

describe("Spark and Ebb read each other's Delta tables", () => {
  let spark: SparkDriver;
  let duck: DuckSession;
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), "ebb-interop-spark-"));
    duck = await DuckSession.open();
    await duck.run("SET TimeZone = 'UTC'");
    spark = await SparkDriver.shared(PYTHON, JARS);
    // s3a on the S3 stand-in: a loopback endpoint over plain HTTP, path-style (no bucket subdomains).
    const aws = testAws();
    await spark.request({
      op: "hadoop_conf",
      conf: {
        "fs.s3a.endpoint": aws.endpoints.s3Endpoint,
        "fs.s3a.endpoint.region": aws.endpoints.region,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "fs.s3a.access.key": aws.endpoints.credentials.accessKeyId,
        "fs.s3a.secret.key": aws.endpoints.credentials.secretAccessKey,
      },
    });
  }, 600_000);
  afterAll(async () => {
    duck?.close();
    await rm(folder, { recursive: true, force: true });
  });

  async function scanAt(store: LocalObjectStore, version: number, select: string): Promise<unknown[][]> {
    const snapshot = await loadSnapshot(store, { version });
    const view = await openTableScan(store, snapshot, { duck, viewName: `scan_at_${version}` });
    try {
      return await rowsOf(
        duck,
        select.replace(/, CAST\(_commit_version[^)]*\)::VARCHAR/, `, '${version}'`),
        `scan_at_${version}`,
      );
    } finally {
      await view.close();
    }
  }

  const read = (tables: Record<string, unknown>[]) =>
    spark.request<Record<string, SparkView>>({ op: "read", tables });

  /** The spec Spark reads `expected`'s versions and change feed with. */
  const readSpec = (name: string, uri: string, expected: Expected) => ({
    name,
    uri,
    versions: Object.keys(expected.versions).map(Number),
    select: expected.selects,
    // With _commit_timestamp: Spark and Ebb date a commit alike (commit-file.ts).
    cdf: expected.cdf ? { from: expected.cdfFrom, select: expected.cdfSelect } : null,
  });

  function expectAgreement(name: string, got: SparkView, expected: Expected): void {
    expect(got.errors, name).toEqual({});
    expect(Object.keys(expected.versions).length, `${name} versions`).toBeGreaterThan(0);
    expect(Object.keys(got.versions).sort(), `${name} versions`).toEqual(
      Object.keys(expected.versions).sort(),
    );
    for (const [version, rows] of Object.entries(expected.versions)) {
      expect.soft(sortRows(got.versions[version]!), `${name} v${version}`).toEqual(rows);
    }
    // The same commit times to the millisecond: a commit's in-commit timestamp (Ebb's tables record
    // them), else its log file's modification time (commit-file.ts), as Spark dates it.
    expect.soft(got.history, `${name} history`).toEqual(expected.history);
    if (expected.cdf) {
      const changes = sortRows(expected.cdf.map((row) => JSON.parse(row) as unknown[]));
      expect.soft(sortRows(got.cdf!), `${name} readChangeFeed`).toEqual(changes);
      expect.soft(sortRows(got.table_changes!), `${name} table_changes`).toEqual(changes);
    }
  }

  /**
   * The versions Spark reads of a shape: the latest (its whole log and every live file) and each
   * RESTORE with the version before it (time travel, to a restored state). Spark runs a query per
   * version; the versions in between delta-rs reads (every version), and Spark their changes in the
   * change feed where the shape keeps one.
   */
  function sparkVersions(expected: Expected): Expected {
    const latest = Math.max(...Object.keys(expected.versions).map(Number));
    const restores = expected.history.filter((h) => h.operation === "RESTORE").map((h) => h.version);
    const picked = new Set([latest, ...restores, ...restores.map((v) => v - 1)]);
    return {
      ...expected,
      versions: Object.fromEntries(Object.entries(expected.versions).filter(([v]) => picked.has(Number(v)))),
    };
  }

  /** The latest version and `before` more, the RESTORE and the version before it. */
  function aroundRestore(expected: Expected, before = 0): Expected {
    const restore = expected.history.find((h) => h.operation === "RESTORE")!.version;
    const latest = Math.max(...Object.keys(expected.versions).map(Number));
    const picked = [restore - 1, restore, ...Array.from({ length: before + 1 }, (_, i) => latest - i)].map(
      String,
    );
    return {
      ...expected,
      versions: Object.fromEntries(Object.entries(expected.versions).filter(([v]) => picked.includes(v))),
    };
  }

  it("Spark reads every shape of table Ebb writes at its latest version and around each RESTORE: rows, history, change feed", async () => {
    const started = Date.now();
    const tables: { name: string; uri: string; expected: Expected }[] = [];
    /**
     * Change feeds Ebb refuses (a schema change that is not additive after their start), each from
     * a version before the last range the refusal names to the latest: Spark must refuse them too.
     */
    const refused: { name: string; uri: string; expected: Expected; whole: boolean }[] = [];
    for (const shape of SHAPES) {
      const uri = path.join(folder, `ebb-${shape.name.replace(/[^a-z0-9]+/gi, "-")}`);
      const store = new LocalObjectStore(uri);
      const table = await writeShape(duck, store, shape);
      try {
        const expected = await ebbView(duck, store, table);
        tables.push({ name: shape.name, uri, expected: sparkVersions(expected) });
        for (let from = expected.cdfRefused?.from ?? expected.cdfFrom; from < expected.cdfFrom; from++) {
          await expect(ebbChanges(duck, store, from, expected.cdfSelect)).rejects.toThrow(
            ChangeFeedSchemaChangeError,
          );
          const name = `${shape.name} (change feed from ${from})`;
          const whole = from === expected.cdfRefused!.from;
          refused.push({ name, uri, expected: { ...expected, versions: {}, cdfFrom: from }, whole });
        }
      } finally {
        await table.close();
      }
    }
    // The tables pipelines wrote across a rewind and replay (every version is delta-rs's to check),
    // history, change feed. A pipeline's three tables at the latest version, the RESTORE and the bad
    // deploy's version before it; the shared sink also at the version before its latest (one
    // writer's DELETE, before the same writer's rewrite).
    for (const [label, write] of PIPELINE_RUNS) {
      const root = path.join(folder, `ebb-${label.replace(/[^a-z0-9]+/gi, "-")}`);
      for (const [dataset, prefix] of Object.entries(await write(new LocalObjectStore(root)))) {
        const uri = path.join(root, prefix);
        const store = new LocalObjectStore(uri);
        const table = await DeltaTable.open(store, { duck });
        try {
          const expected = await ebbView(duck, store, table);
          const picked = aroundRestore(expected, label === "shared sink" ? 1 : 0);
          tables.push({ name: `${label} ${dataset}`, uri, expected: picked });
        } finally {
          await table.close();
        }
      }
    }
    expect(refused.map((r) => r.name)).toEqual(
      [1, 2, 3].map((from) => `schema evolution, then RESTORE to before it (change feed from ${from})`),
    );
    const ebbDone = Date.now();
    const seen = await read([
      ...tables.map((t) => readSpec(t.name, t.uri, t.expected)),
      ...refused.map((t) => ({ ...readSpec(t.name, t.uri, t.expected), history: false })),
    ]);
    for (const { name, expected } of tables) expectAgreement(name, seen[name]!, expected);
    // Spark names the whole range's refusal as Ebb does; a later start whose own schema is the
    // one that does not read as the latest (INCOMPATIBLE_DATA_SCHEMA) is its other name for it.
    for (const { name, whole } of refused) {
      for (const reader of ["readChangeFeed", "table_changes"]) {
        expect(seen[name]!.errors[reader], `${name} ${reader}`).toMatch(
          whole
            ? /^\S*DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE/
            : /DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_(SCHEMA_CHANGE|DATA_SCHEMA)/,
        );
      }
    }
    console.log(
      `interop Spark: ${tables.length} tables; Ebb wrote and read them in ${ebbDone - started} ms, ` +
        `Spark read them in ${Date.now() - ebbDone} ms`,
    );
  });

  it("Spark reads Ebb's tables on the S3 stand-in through s3a: the latest version and the one before", async () => {
    const started = Date.now();
    const tables: { name: string; uri: string; expected: Expected }[] = [];
    const onS3 = ["create and append", "partitioned by string, long, date", "checkpoints, then log cleanup"];
    for (const shape of SHAPES.filter((s) => onS3.includes(s.name))) {
      const prefix = uniquePrefix("interop-s3a");
      const store = testObjectStore(prefix);
      const table = await writeShape(duck, store, shape);
      try {
        const expected = await ebbView(duck, store, table);
        const latest = table.snapshot.version;
        const versions = Object.fromEntries(
          Object.entries(expected.versions).filter(([v]) => Number(v) >= latest - 1),
        );
        const uri = `s3a://${testAws().storage.bucket}/${prefix.replace(/\/$/, "")}`;
        tables.push({ name: shape.name, uri, expected: { ...expected, versions } });
      } finally {
        await table.close();
      }
    }
    const ebbDone = Date.now();
    const seen = await read(tables.map((t) => readSpec(t.name, t.uri, t.expected)));
    for (const { name, expected } of tables) expectAgreement(`${name} (S3)`, seen[name]!, expected);
    console.log(
      `interop Spark (S3 stand-in): ${tables.length} tables; Ebb wrote and read them in ` +
        `${ebbDone - started} ms, Spark read them in ${Date.now() - ebbDone} ms`,
    );
  });

  it("Ebb reads the tables Spark writes at every version, equal to Spark's own reads", async () => {
    const started = Date.now();
    const plain = path.join(folder, "spark-plain");
    const partitioned = path.join(folder, "spark-partitioned");
    const properties =
      "TBLPROPERTIES (delta.enableChangeDataFeed = true, delta.enableDeletionVectors = false, " +
      "delta.checkpointInterval = 3)";
    await spark.request({
      op: "sql",
      statements: [
        `CREATE TABLE ${at(plain)} (${COLUMNS}) USING delta ${properties}`,
        `INSERT INTO ${at(plain)} ${sparkRows(0, 10)}`,
        `INSERT INTO ${at(plain)} ${sparkRows(10, 14)}`,
        `INSERT OVERWRITE ${at(plain)} ${sparkRows(2, 12)}`,
        `MERGE INTO ${at(plain)} t USING (${sparkRows(8, 16, 100)}) s ON t.id = s.id ` +
          `WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *`,
        `DELETE FROM ${at(plain)} WHERE id % 3 = 0`,
        `UPDATE ${at(plain)} SET name = 'updated' WHERE id % 3 = 1`,
        `RESTORE TABLE ${at(plain)} TO VERSION AS OF 4`,
        `ALTER TABLE ${at(plain)} ADD COLUMNS (extra STRING)`,
        `INSERT INTO ${at(plain)} SELECT *, 'x' || id AS extra FROM (${sparkRows(20, 23)})`,
        `CREATE TABLE ${at(partitioned)} (${COLUMNS}) USING delta PARTITIONED BY (name, day) ${properties}`,
        `INSERT INTO ${at(partitioned)} ${sparkRows(0, 20)}`,
        `INSERT INTO ${at(partitioned)} SELECT id, CAST(NULL AS STRING), score, n, flag, day, at, amount, big ` +
          `FROM (${sparkRows(20, 23)})`,
        `DELETE FROM ${at(partitioned)} WHERE name = 'name-1'`,
        `UPDATE ${at(partitioned)} SET n = n + 10 WHERE day = DATE'2026-01-02'`,
        `OPTIMIZE ${at(partitioned)}`,
      ],
    });
    const sparkDone = Date.now();
    const tables: { name: string; uri: string; expected: Expected }[] = [];
    for (const [name, uri] of [
      ["plain", plain],
      ["partitioned", partitioned],
    ] as const) {
      const store = new LocalObjectStore(uri);
      const table = await DeltaTable.open(store, { duck });
      try {
        tables.push({ name, uri, expected: await ebbView(duck, store, table) });
      } finally {
        await table.close();
      }
    }
    expect(Object.keys(tables[0]!.expected.versions)).toHaveLength(10);
    const seen = await read(tables.map((t) => readSpec(t.name, t.uri, t.expected)));
    for (const { name, expected } of tables) expectAgreement(`Spark-written ${name}`, seen[name]!, expected);

    // Ebb's RESTORE records its parameters as Spark's does (DESCRIBE HISTORY shows them as written).
    const ours = new LocalObjectStore(path.join(folder, "ebb-restored"));
    const restored = await DeltaTable.create(ours, { schema, rows: { sql: rowsSql(0, 2) } }, { duck });
    try {
      await restored.append({ sql: rowsSql(2, 3) });
      await restored.restore({ to: { version: 0 } });
    } finally {
      await restored.close();
    }
    const parameters = async (store: LocalObjectStore, version: number) =>
      findCommitInfo(await readCommit(store, version))?.operationParameters;
    const theirs = await parameters(new LocalObjectStore(plain), 7);
    expect(theirs).toEqual({ version: 4, timestamp: null });
    expect(await parameters(ours, 2)).toEqual({ ...theirs, version: 0 });
    console.log(
      `interop Spark: wrote 2 tables in ${sparkDone - started} ms; Ebb and Spark read them in ` +
        `${Date.now() - sparkDone} ms`,
    );
  });

  it("a Spark change-feed stream over an Ebb table keeps going across an Ebb RESTORE", async () => {
    // Ebb's RESTORE is one commit of adds and removes with dataChange: true, no cdc files: a change
    // feed reader derives deletes and inserts from it, so a readChangeFeed stream sees the rewind as
    // the changes it is (a plain stream stops at any DELETE or RESTORE, as on Spark's own tables).
    const uri = path.join(folder, "ebb-streamed");
    const store = new LocalObjectStore(uri);
    const table = await writeShape(duck, store, {
      name: "streamed",
      properties: { "delta.enableChangeDataFeed": "true" },
      build: async (t) => {
        await t.append({ sql: rowsSql(10, 12) });
      },
    });
    const stream = {
      op: "stream",
      uri,
      options: { readChangeFeed: "true" },
      sink: path.join(folder, "spark-stream-sink"),
      checkpoint: path.join(folder, "spark-stream-checkpoint"),
      select: STREAM_SELECT,
    };
    try {
      expect(await spark.request<unknown[][]>(stream)).toHaveLength(12);
      await table.delete("id < 3");
      await table.restore({ to: { version: 1 } });
      await table.append({ sql: rowsSql(50, 52) });
      const streamed = await spark.request<unknown[][]>(stream);
      // The stream's first batch is version 1 as inserts, then every change Ebb's feed has since.
      const initial = await scanAt(store, 1, STREAM_SELECT.replace("_change_type, ", "'insert', "));
      const view = await openChangeFeed(store, 2, undefined, { duck, viewName: "streamed_changes" });
      try {
        const changes = await rowsOf(duck, STREAM_SELECT, "streamed_changes");
        expect(sortRows(streamed)).toEqual(sortRows([...initial, ...changes]));
        // The RESTORE (version 3) re-adds the file the DELETE rewrote: net, the three deleted rows return.
        const atRestore = (type: string) => changes.filter((row) => row[2] === type && row[3] === "3").length;
        expect(atRestore("insert") - atRestore("delete")).toBe(3);
      } finally {
        await view.close();
      }
    } finally {
      await table.close();
    }
  });

  it("refuses a Spark table with deletion vectors by the feature's name", async () => {
    const uri = path.join(folder, "spark-deletion-vectors");
    await spark.request({
      op: "sql",
      statements: [
        `CREATE TABLE ${at(uri)} (id BIGINT) USING delta TBLPROPERTIES (delta.enableDeletionVectors = true)`,
        `INSERT INTO ${at(uri)} SELECT id FROM range(0, 10)`,
        `DELETE FROM ${at(uri)} WHERE id = 3`,
      ],
    });
    const refused = await loadSnapshot(new LocalObjectStore(uri)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UnsupportedFeatureError);
    expect(String(refused)).toContain("deletionVectors");
  });
});
