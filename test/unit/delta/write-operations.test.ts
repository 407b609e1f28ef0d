import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddFile } from "../../../shared/delta/log/actions.ts";
import { parseCommitFile } from "../../../shared/delta/log/commit-file.ts";
import { escapePathName } from "../../../shared/delta/log/data-file-paths.ts";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import {
  AppendOnlyTableError,
  MergeDuplicateSourceError,
  SchemaMismatchError,
} from "../../../shared/delta/errors.ts";
import { commitKey } from "../../../shared/delta/log/log-paths.ts";
import { serializePartitionValueSql } from "../../../shared/delta/write/data-file-writer.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { byId, countingStore, field, ManualClock, schemaOf } from "./delta-test-kit.ts";

const schema = schemaOf(
  field("id", "long", false),
  field("name", "string"),
  field("score", "double"),
  field("at", "timestamp"),
  field("day", "date"),
);

async function actionsOf(store: MemoryObjectStore, version: number) {
  return parseCommitFile(new TextDecoder().decode(await store.get(commitKey(version))), commitKey(version));
}
const addsOf = async (store: MemoryObjectStore, version: number): Promise<AddFile[]> =>
  (await actionsOf(store, version)).flatMap((a) => ("add" in a ? [a.add] : []));

describe("writing data files", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("names files part-<uuid>.snappy.parquet and records stats, size and modification time", async () => {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      {
        schema,
        rows: {
          rows: [
            { id: 1, name: "b", score: 1.5, at: "2026-01-01T10:00:00.123456Z", day: "2026-01-01" },
            { id: 7, name: "a", score: null, at: "2026-01-02T00:00:00Z", day: "2026-01-03" },
          ],
        },
      },
      { clock: clock.read, duck },
    );
    const [add] = await addsOf(store, 0);
    expect(add!.path).toMatch(/^part-[0-9a-f-]{36}\.snappy\.parquet$/);
    expect(add!.size).toBe((await store.head(add!.path))!.size);
    expect(add!).toMatchObject({ modificationTime: clock.now, dataChange: true, partitionValues: {} });
    expect(JSON.parse(add!.stats!)).toEqual({
      numRecords: 2,
      minValues: { id: 1, name: "a", score: 1.5, at: "2026-01-01T10:00:00.123Z", day: "2026-01-01" },
      maxValues: { id: 7, name: "b", score: 1.5, at: "2026-01-02T00:00:00.000Z", day: "2026-01-03" },
      nullCount: { id: 0, name: 0, score: 1, at: 0, day: 0 },
    });
    await table.close();
  });

  it("writes partition folders escaped like Hive and URI-encodes the log path", async () => {
    expect(escapePathName("a/b%c=d")).toBe("a%2Fb%25c%3Dd");
    const store = new MemoryObjectStore();
    const table = await DeltaTable.create(
      store,
      {
        schema: schemaOf(field("id", "long"), field("part", "string")),
        partitionColumns: ["part"],
        rows: {
          rows: [
            { id: 1, part: "a/b%c" },
            { id: 2, part: null },
            { id: 3, part: "plain" },
          ],
        },
      },
      { duck },
    );
    const adds = (await addsOf(store, 0)).sort((a, b) => a.path.localeCompare(b.path));
    expect(adds.map((a) => a.partitionValues)).toEqual([
      { part: null },
      { part: "a/b%c" },
      { part: "plain" },
    ]);
    expect(adds[0]!.path).toMatch(/^part=__HIVE_DEFAULT_PARTITION__\/part-.*\.snappy\.parquet$/);
    expect(adds[1]!.path).toMatch(/^part=a%252Fb%2525c\/part-/);
    expect(await store.head(decodeURIComponent(adds[1]!.path))).toBeDefined();
    expect(byId(await table.scan())).toEqual([
      { id: 1, part: "a/b%c" },
      { id: 2, part: null },
      { id: 3, part: "plain" },
    ]);
    await table.close();
  });

  it("serializes typed partition values per the protocol and reads them back", async () => {
    const store = new MemoryObjectStore();
    const typed = schemaOf(
      field("id", "long"),
      field("day", "date"),
      field("at", "timestamp"),
      field("n", "integer"),
      field("flag", "boolean"),
      field("amount", { type: "decimal", precision: 10, scale: 2 }),
    );
    const row = {
      id: 1,
      day: "2026-03-04",
      at: "2026-03-04T05:06:07.123456Z",
      n: -7,
      flag: true,
      amount: "12.50",
    };
    const table = await DeltaTable.create(
      store,
      { schema: typed, partitionColumns: ["day", "at", "n", "flag", "amount"], rows: { rows: [row] } },
      { duck },
    );
    const [add] = await addsOf(store, 0);
    expect(add!.partitionValues).toEqual({
      day: "2026-03-04",
      at: "2026-03-04T05:06:07.123456Z",
      n: "-7",
      flag: "true",
      amount: "12.50",
    });
    expect(add!.path).toMatch(
      /^day=2026-03-04\/at=2026-03-04T05%253A06%253A07.123456Z\/n=-7\/flag=true\/amount=12.50\/part-/,
    );
    const [read] = await table.scan();
    expect(read).toMatchObject({ id: 1n, n: -7, flag: true, amount: 12.5 });
    expect((read!.at as Date).toISOString()).toBe("2026-03-04T05:06:07.123Z");
    expect((read!.day as Date).toISOString().slice(0, 10)).toBe("2026-03-04");
    await table.close();
  });

  it("starts a new file when one passes the target size", async () => {
    const store = new MemoryObjectStore();
    const kv = schemaOf(field("id", "long"), field("name", "string"));
    const table = await DeltaTable.create(store, { schema: kv }, { duck, targetFileSizeBytes: 128 * 1024 });
    const result = await table.append({
      sql: "SELECT range AS id, 'name-' || range AS name FROM range(150000)",
    });
    expect(result).toMatchObject({ operationMetrics: { numOutputRows: 150_000 } });
    const files = [...table.snapshot.files.values()];
    expect(files.length).toBeGreaterThan(1);
    expect(
      files.reduce((sum, f) => sum + (JSON.parse(f.stats!) as { numRecords: number }).numRecords, 0),
    ).toBe(150_000);
    expect((await table.scan()).length).toBe(150_000);
    await table.close();
  });

  it("takes rows as DuckDB SQL over the caller's session", async () => {
    const store = new MemoryObjectStore();
    const table = await DeltaTable.create(
      store,
      { schema: schemaOf(field("id", "long"), field("name", "string")) },
      { duck },
    );
    await duck.run(
      "CREATE OR REPLACE TEMP TABLE batch AS SELECT range AS id, 'n' || range AS name FROM range(5)",
    );
    const result = await table.append({ sql: "SELECT * FROM batch" });
    expect(result).toMatchObject({
      status: "committed",
      version: 1,
      operationMetrics: { numFiles: 1, numOutputRows: 5 },
    });
    expect((await table.scan()).length).toBe(5);
    await expect(table.append({ sql: "SELECT 1 AS id, 2 AS nope" })).rejects.toBeInstanceOf(
      SchemaMismatchError,
    );
    await table.close();
  });

  it("enforces NOT NULL and refuses unknown columns", async () => {
    const table = await DeltaTable.create(new MemoryObjectStore(), { schema }, { duck });
    await expect(table.append({ rows: [{ id: null, name: "x" }] })).rejects.toThrow(
      /NOT NULL column\(s\) id/,
    );
    await expect(table.append({ rows: [{ name: "x" }] })).rejects.toThrow(/NOT NULL column\(s\) id/);
    await expect(table.append({ rows: [{ id: 1, extra: 1 }] })).rejects.toThrow(
      /columns the table does not: extra/,
    );
    await table.append({ rows: [{ id: 1, name: "x" }] });
    await expect(table.update({ set: { id: "NULL" } })).rejects.toThrow(/NOT NULL column\(s\) id/);
    expect(table.snapshot.version).toBe(1);
    await table.close();
  });

  it("skips a txn write the table already holds, and reports it", async () => {
    const store = new MemoryObjectStore();
    const table = await DeltaTable.create(store, { schema }, { duck });
    const txn = { appId: "pipe/flow", version: 5 };
    expect(await table.append({ rows: [{ id: 1 }] }, { txn })).toMatchObject({
      status: "committed",
      version: 1,
    });
    expect(await table.append({ rows: [{ id: 1 }] }, { txn })).toEqual({
      status: "txn-skipped",
      appId: "pipe/flow",
      requestedVersion: 5,
      tableVersion: 5,
    });
    expect(await table.append({ rows: [{ id: 1 }] }, { txn: { ...txn, version: 4 } })).toMatchObject({
      status: "txn-skipped",
    });
    expect((await table.scan()).length).toBe(1);
    expect((await actionsOf(store, 1)).find((a) => "txn" in a)).toMatchObject({
      txn: { appId: "pipe/flow", version: 5 },
    });
    await table.close();
  });

  it("honours a caller-supplied timestamp floor", async () => {
    const clock = new ManualClock();
    const table = await DeltaTable.create(
      new MemoryObjectStore(clock.read),
      { schema },
      { clock: clock.read, duck },
    );
    const result = await table.append({ rows: [{ id: 1 }] }, { timestampFloor: clock.now + 60_000 });
    expect(result).toMatchObject({ timestamp: clock.now + 60_000 });
    await table.close();
  });
});

describe("copy-on-write DELETE, UPDATE and MERGE", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  const kv = schemaOf(field("id", "long", false), field("value", "string"));

  async function threeFiles() {
    const store = new MemoryObjectStore();
    const table = await DeltaTable.create(store, { schema: kv }, { duck });
    for (const batch of [
      [1, 2],
      [3, 4],
      [5, 6],
    ]) {
      await table.append({ rows: batch.map((id) => ({ id, value: `v${id}` })) });
    }
    return { store, table };
  }

  it("DELETE rewrites only the files holding matching rows", async () => {
    const { store, table } = await threeFiles();
    const result = await table.delete("id = 3");
    expect(result).toMatchObject({
      operationMetrics: { numRemovedFiles: 1, numAddedFiles: 1, numDeletedRows: 1, numCopiedRows: 1 },
    });
    const actions = await actionsOf(store, 4);
    expect(actions.filter((a) => "remove" in a)).toHaveLength(1);
    expect(byId(await table.scan()).map((r) => r.id)).toEqual([1, 2, 4, 5, 6]);
    expect(await table.delete("id = 42")).toMatchObject({
      operationMetrics: { numRemovedFiles: 0, numAddedFiles: 0 },
    });
    await table.close();
  });

  it("UPDATE treats a NULL predicate as false and casts the new value", async () => {
    const { table } = await threeFiles();
    await table.append({ rows: [{ id: 7, value: null }] });
    await table.update({ set: { value: "upper(value) || '!'" }, where: "value <> 'v1'" });
    expect(byId(await table.scan()).map((r) => r.value)).toEqual([
      "v1",
      "V2!",
      "V3!",
      "V4!",
      "V5!",
      "V6!",
      null,
    ]);
    await expect(table.update({ set: { nope: "1" } })).rejects.toBeInstanceOf(SchemaMismatchError);
    await table.close();
  });

  it("MERGE deletes matched rows, and refuses a source with duplicate keys", async () => {
    const { table } = await threeFiles();
    const result = await table.merge({
      source: { rows: [{ id: 2 }, { id: 5 }, { id: 9 }] },
      on: ["id"],
      whenMatched: "delete",
    });
    expect(result).toMatchObject({
      operationMetrics: { numTargetRowsDeleted: 2, numTargetFilesRemoved: 2, numTargetRowsInserted: 0 },
    });
    expect(byId(await table.scan()).map((r) => r.id)).toEqual([1, 3, 4, 6]);
    await expect(
      table.merge({
        source: {
          rows: [
            { id: 1, value: "a" },
            { id: 1, value: "b" },
          ],
        },
        on: ["id"],
        whenMatched: { update: "all" },
      }),
    ).rejects.toBeInstanceOf(MergeDuplicateSourceError);
    await table.close();
  });

  it("MERGE reads only the files whose key statistics admit a source key", async () => {
    const counting = countingStore(new MemoryObjectStore());
    const table = await DeltaTable.create(counting.store, { schema: kv }, { duck });
    for (const batch of [
      [1, 2],
      [3, 4],
      [5, 6],
    ]) {
      await table.append({ rows: batch.map((id) => ({ id, value: `v${id}` })) });
    }
    counting.gets.length = 0;
    const result = await table.merge({
      source: {
        rows: [
          { id: 4, value: "four" },
          { id: 40, value: "forty" },
        ],
      },
      on: ["id"],
      whenMatched: { update: "all" },
      whenNotMatched: "insert",
    });
    expect(result).toMatchObject({
      operationMetrics: { numTargetRowsUpdated: 1, numTargetRowsInserted: 1, numTargetFilesRemoved: 1 },
    });
    expect(counting.gets.filter((key) => key.endsWith(".parquet"))).toHaveLength(1);
    expect(byId(await table.scan()).map((r) => r.value)).toEqual([
      "v1",
      "v2",
      "v3",
      "four",
      "v5",
      "v6",
      "forty",
    ]);
    await table.close();
  });

  it("MERGE on a partition key skips files of other partitions and of the null partition", async () => {
    const partitioned = schemaOf(field("region", "string"), field("id", "long"), field("value", "string"));
    const counting = countingStore(new MemoryObjectStore());
    const table = await DeltaTable.create(
      counting.store,
      {
        schema: partitioned,
        partitionColumns: ["region"],
        rows: {
          rows: [
            { region: "eu", id: 1 },
            { region: "us", id: 1 },
            { region: null, id: 1 },
          ],
        },
      },
      { duck },
    );
    counting.gets.length = 0;
    await table.merge({
      source: { rows: [{ region: "us", id: 1, value: "x" }] },
      on: ["region", "id"],
      whenMatched: { update: "all" },
    });
    expect(counting.gets.filter((key) => key.endsWith(".parquet"))).toEqual([
      expect.stringMatching(/^region=us\//),
    ]);
    const rows = (await table.scan()).map((r) => JSON.stringify([r.region, r.value]));
    expect(rows.sort()).toEqual(['["eu",null]', '["us","x"]', "[null,null]"]);
    await table.close();
  });

  it("an append-only table refuses DELETE, UPDATE, overwrite and matched MERGE", async () => {
    const table = await DeltaTable.create(
      new MemoryObjectStore(),
      { schema: kv, properties: { "delta.appendOnly": "true" }, rows: { rows: [{ id: 1 }] } },
      { duck },
    );
    await expect(table.delete()).rejects.toBeInstanceOf(AppendOnlyTableError);
    await expect(table.update({ set: { value: "'x'" } })).rejects.toBeInstanceOf(AppendOnlyTableError);
    await expect(table.overwrite({ rows: [] })).rejects.toBeInstanceOf(AppendOnlyTableError);
    expect(
      await table.merge({ source: { rows: [{ id: 2 }] }, on: ["id"], whenNotMatched: "insert" }),
    ).toMatchObject({ status: "committed" });
    await table.close();
  });
});

describe("double partition values", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("are written NaN, Infinity and -Infinity as Spark writes them, and read back", async () => {
    const store = new MemoryObjectStore(() => 1_000);
    const table = await DeltaTable.create(
      store,
      {
        schema: schemaOf(field("id", "long", false), field("d", "double")),
        partitionColumns: ["d"],
        rows: {
          sql: `SELECT * FROM (VALUES (1, 'nan'::DOUBLE), (2, 'inf'::DOUBLE), (3, '-inf'::DOUBLE), (4, 1.5::DOUBLE)) t(id, d)`,
        },
      },
      { clock: () => 1_000, duck },
    );
    try {
      const values = (await addsOf(store, 0)).map((add) => add.partitionValues.d).sort();
      expect(values).toEqual(["-Infinity", "1.5", "Infinity", "NaN"]);
      const rows = (await table.scan()).map((r) => [Number(r.id), String(r.d)]).sort();
      expect(rows).toEqual([
        [1, "NaN"],
        [2, "Infinity"],
        [3, "-Infinity"],
        [4, "1.5"],
      ]);
    } finally {
      await table.close();
    }
  });

  // Spark's CAST(x AS STRING), its partition folders' spelling (checked against Spark 3.5.6).
  const spark: readonly (readonly [number, string])[] = [
    [1e20, "1.0E20"],
    [1e-4, "1.0E-4"],
    [1234567, "1234567.0"],
    [12345678, "1.2345678E7"],
    [100, "100.0"],
    [0.001, "0.001"],
    [0.00099, "9.9E-4"],
    [1.5e-7, "1.5E-7"],
    [-2.5e300, "-2.5E300"],
    [1e7, "1.0E7"],
    [9999999, "9999999.0"],
    [0.1, "0.1"],
    [123456789012345680000, "1.2345678901234568E20"],
    [-0, "-0.0"],
    [0, "0.0"],
    [1e16, "1.0E16"],
    [2e-5, "2.0E-5"],
    [1.7976931348623157e308, "1.7976931348623157E308"],
  ];

  it("are spelled as Spark spells them (Java's Double.toString), so both engines write one value alike", async () => {
    const store = new MemoryObjectStore(() => 1_000);
    const values = spark.map(([value], i) => `(${i}, ${doubleLiteral(value)})`).join(", ");
    const table = await DeltaTable.create(
      store,
      {
        schema: schemaOf(field("id", "long", false), field("d", "double")),
        partitionColumns: ["d"],
        rows: { sql: `SELECT * FROM (VALUES ${values}) t(id, d)` },
      },
      { clock: () => 1_000, duck },
    );
    try {
      const written = (await addsOf(store, 0)).map((add) => add.partitionValues.d).sort();
      expect(written).toEqual(spark.map(([, text]) => text).sort());
      const rows = (await table.scan()).map((r) => [Number(r.id), Number(r.d)]);
      expect(rows.sort((a, b) => a[0]! - b[0]!)).toEqual(spark.map(([value], i) => [i, value]));
    } finally {
      await table.close();
    }
  });

  it("spell every double as Java does", async () => {
    const sql = serializePartitionValueSql("double", "d");
    // Normal doubles: Java spells a subnormal with two digits where one would do (4.9E-324).
    const doubles = fc.double({ noNaN: true, noDefaultInfinity: true }).filter(normal);
    await fc.assert(
      fc.asyncProperty(fc.array(doubles, { minLength: 1, maxLength: 200 }), async (values) => {
        const rows = values.map((value, i) => `(${i}, ${doubleLiteral(value)})`).join(", ");
        const spelled = await duck.rows(`SELECT ${sql} AS v FROM (VALUES ${rows}) t(i, d) ORDER BY i`);
        expect(spelled.map((row) => row.v)).toEqual(values.map(javaDoubleString));
      }),
      { numRuns: 10 },
    );
  });

  it("spell a float as Java's Float.toString does", async () => {
    const sql = serializePartitionValueSql("float", "f");
    const cases = [
      ["0.1", "0.1"],
      ["1e10", "1.0E10"],
      ["3.4028235e38", "3.4028235E38"],
      ["1.1", "1.1"],
    ] as const;
    for (const [literal, text] of cases) {
      const [row] = await duck.rows(`SELECT ${sql} AS v FROM (SELECT '${literal}'::FLOAT AS f)`);
      expect(row!.v, literal).toBe(text);
    }
  });
});

function normal(value: number): boolean {
  return value === 0 || Math.abs(value) >= 2.2250738585072014e-308;
}

/** A double as a DuckDB literal that reads back exactly (-0.0 included). */
function doubleLiteral(value: number): string {
  return `'${Object.is(value, -0) ? "-0.0" : String(value)}'::DOUBLE`;
}

/**
 * Java's Double.toString of a finite double (JDK 19+: the shortest digits, as JavaScript's), the
 * oracle: plain from 10^-3 up to 10^7, else d.dddE±n.
 */
function javaDoubleString(value: number): string {
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  const [mantissa, exponent] = Math.abs(value).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const power = Number(exponent);
  if (power >= -3 && power < 7) {
    if (power < 0) return `${sign}0.${"0".repeat(-power - 1)}${digits}`;
    const whole = digits.padEnd(power + 1, "0").slice(0, power + 1);
    return `${sign}${whole}.${digits.slice(power + 1) || "0"}`;
  }
  return `${sign}${digits[0]}.${digits.slice(1) || "0"}E${power}`;
}
