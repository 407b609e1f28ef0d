import { readFile } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFileStats } from "../../../shared/delta/log/stats-json.ts";
import { parquetStatsQuery, statsColumns, toFileStats } from "../../../shared/delta/write/file-stats.ts";
import { footerFileStats } from "../../../shared/delta/write/footer-stats.ts";
import { duckType, type StructType } from "../../../shared/delta/table/schema.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { quoteLiteral } from "../../../shared/duck/sql-text.ts";

/**
 * The stats decoded from a footer in process (footer-stats.ts) against the reference: DuckDB's
 * footer query (file-stats.ts), which the writer used alone before. Random files of several row
 * groups with NULLs, NaN, -0.0, ±inf, empty and long strings, dates and timestamps before 1970 and
 * outside years 1-9999: wherever the decoder answers, its stats are the query's, byte for byte.
 */

const SCHEMA: StructType = {
  type: "struct",
  fields: [
    { name: "l", type: "long", nullable: true, metadata: {} },
    { name: "i", type: "integer", nullable: true, metadata: {} },
    { name: "b", type: "byte", nullable: true, metadata: {} },
    { name: "d", type: "double", nullable: true, metadata: {} },
    { name: "f", type: "float", nullable: true, metadata: {} },
    { name: "s", type: "string", nullable: true, metadata: {} },
    { name: "dt", type: "date", nullable: true, metadata: {} },
    { name: "ts", type: "timestamp", nullable: true, metadata: {} },
    { name: "tn", type: "timestamp_ntz", nullable: true, metadata: {} },
    { name: "flag", type: "boolean", nullable: true, metadata: {} },
  ],
};

const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 4 });
const doubleArb = fc.oneof(
  fc.double(),
  fc.constantFrom(Number.NaN, -0, 0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
);
const floatArb = fc.oneof(
  fc.float(),
  fc.constantFrom(Number.NaN, -0, 0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
);
const stringArb = fc.oneof(
  fc.constantFrom("", "a", "é", "\u{1F600}", "\uFFFF", "x".repeat(32), "y".repeat(33)),
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => s.replace(/\0/g, "")),
);
/**
 * Micros since 1970, mostly within years 1-9999, a few outside (the decoder hands those back). Rare
 * enough that most files, of up to 16 rows and three such columns, are still decoded.
 */
const microsArb = fc.oneof(
  { weight: 30, arbitrary: fc.bigInt({ min: -62_135_596_800_000_000n, max: 253_402_300_799_999_999n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -1_000_000n, max: 1_000_000n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -90_000_000_000_000_000n, max: 9_000_000_000_000_000_000n }) },
);
const daysArb = fc.oneof(
  { weight: 30, arbitrary: fc.integer({ min: -719_162, max: 2_932_896 }) },
  { weight: 1, arbitrary: fc.integer({ min: -3_000_000, max: 5_000_000 }) },
);

const rowArb = fc.record({
  l: nullable(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
  i: nullable(fc.integer()),
  b: nullable(fc.integer({ min: -128, max: 127 })),
  d: nullable(doubleArb),
  f: nullable(floatArb),
  s: nullable(stringArb),
  dt: nullable(daysArb),
  ts: nullable(microsArb),
  tn: nullable(microsArb),
  flag: nullable(fc.boolean()),
});
type Row = typeof rowArb extends fc.Arbitrary<infer R> ? R : never;

function floatLiteral(value: number, type: string): string {
  if (Number.isNaN(value)) return `'nan'::${type}`;
  if (Object.is(value, -0)) return `'-0.0'::${type}`;
  return `'${value}'::${type}`;
}

function rowSql(row: Row): string {
  const or = <T>(value: T | null, text: (v: T) => string, type: string) =>
    value === null ? `NULL::${type}` : text(value);
  return (
    `SELECT ${or(row.l, (v) => `(${v})::BIGINT`, "BIGINT")} AS l, ${or(row.i, (v) => `(${v})::INTEGER`, "INTEGER")} AS i, ` +
    `${or(row.b, (v) => `(${v})::TINYINT`, "TINYINT")} AS b, ${or(row.d, (v) => floatLiteral(v, "DOUBLE"), "DOUBLE")} AS d, ` +
    `${or(row.f, (v) => floatLiteral(v, "FLOAT"), "FLOAT")} AS f, ${or(row.s, quoteLiteral, "VARCHAR")} AS s, ` +
    `${or(row.dt, (v) => `(DATE '1970-01-01' + ${v})`, "DATE")} AS dt, ` +
    `${or(row.ts, (v) => `make_timestamp((${v})::BIGINT)::${duckType("timestamp")}`, duckType("timestamp"))} AS ts, ` +
    `${or(row.tn, (v) => `make_timestamp((${v})::BIGINT)`, "TIMESTAMP")} AS tn, ` +
    `${or(row.flag, (v) => String(v), "BOOLEAN")} AS flag`
  );
}

/** The footer's bytes with its length and magic, as the writer keeps them from the upload's tail. */
function footerOf(file: Buffer): Uint8Array {
  return file.subarray(file.length - (file.readUInt32LE(file.length - 8) + 8));
}

describe("stats decoded from a footer", () => {
  let duck: DuckSession;
  let scratch: ScratchFolder;
  beforeAll(async () => {
    duck = await DuckSession.open({ config: { threads: "1" } });
    await duck.run("SET TimeZone = 'UTC'");
    scratch = await ScratchFolder.create("ebb-footer-stats-");
  });
  afterAll(async () => {
    duck?.close();
    await scratch?.dispose();
  });
  const columns = statsColumns(SCHEMA, []);
  let written = 0;

  /** Both stats of a file of `groups` (one row group each, in order); the decoded ones may be undefined. */
  async function bothStats(groups: readonly (readonly Row[])[]) {
    const file = path.join(scratch.dir, `f${written++}.parquet`);
    const union = groups.map((rows) => `SELECT * FROM (${rows.map(rowSql).join(" UNION ALL ")})`);
    await duck.run(
      `COPY (${union.join(" UNION ALL ")}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 1)`,
    );
    const [row] = await duck.rows(parquetStatsQuery(file, columns));
    const reference = encodeFileStats(toFileStats(row!, columns));
    const decoded = footerFileStats(footerOf(await readFile(file)), columns);
    return { reference, decoded: decoded && encodeFileStats(decoded) };
  }

  it("are the footer query's stats wherever the decoder answers", async () => {
    let answered = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(rowArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
        async (groups) => {
          runs++;
          const { reference, decoded } = await bothStats(groups);
          if (decoded === undefined) return;
          answered++;
          expect(decoded).toBe(reference);
        },
      ),
      { numRuns: Number(process.env["FOOTER_STATS_RUNS"] ?? 60) },
    );
    // Out-of-range dates and timestamps hand some files back; most must be decoded.
    expect(answered).toBeGreaterThan(runs / 4);
  }, 600_000);

  it("answer for a file of the pipeline's types (no query runs for it)", async () => {
    const row: Row = { l: 1n, i: 2, b: 3, d: 0.5, f: 1.5, s: "eu", dt: 0, ts: 0n, tn: 0n, flag: true };
    const { reference, decoded } = await bothStats([[row], [{ ...row, d: Number.NaN, s: "" }]]);
    expect(decoded).toBe(reference);
  });

  it("hand a file with a timestamp outside years 1-9999 back to the query", async () => {
    const row: Row = { l: 1n, i: 2, b: 3, d: 0.5, f: 1.5, s: "eu", dt: 0, ts: 0n, tn: 0n, flag: true };
    const { decoded } = await bothStats([[row], [{ ...row, ts: 9_000_000_000_000_000_000n }]]);
    expect(decoded).toBeUndefined();
  });

  it("hand a decimal column back to the query", () => {
    const decimal = statsColumns(
      {
        type: "struct",
        fields: [
          { name: "x", type: { type: "decimal", precision: 10, scale: 2 }, nullable: true, metadata: {} },
        ],
      },
      [],
    );
    expect(footerFileStats(new Uint8Array(), decimal)).toBeUndefined();
  });
});
