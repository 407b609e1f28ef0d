import { spawn } from "node:child_process";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { TIE_HASH_TYPES } from "../../shared/engine/auto-cdc/batch-reduction.ts";
import { quoteIdentifier, quoteLiteral } from "../../shared/duck/sql-text.ts";

/**
 * The AUTO CDC tie hash on the engine's own Spark (the EMR release's pin, EBB_SPARK_PYTHON) against
 * DuckDB's: ties at one sequence are broken by `md5(to_json(struct_pack(keys, values)))`
 * (auto-cdc/cdc-statements.ts), and the Spark job breaks them itself for the types in
 * `TIE_HASH_TYPES` (functions/spark/ebb_spark_cdc.py). For every such type, on a corpus of values
 * (bounds, NULL, quotes, backslashes, control characters, unicode beyond the BMP, far dates,
 * sub-second timestamps), each row's hash is DuckDB's byte for byte; for the types left out, the
 * corpus shows a value whose JSON Spark spells otherwise (why they stay with the apply's DuckDB).
 */

const sparkEngineReady = process.env["EBB_SPARK_PYTHON"] !== undefined;

interface Column {
  readonly name: string;
  /** Spark's type (a name in TIE_HASH_TYPES for those allowed) and DuckDB's. */
  readonly spark: string;
  readonly duck: string;
}
interface Case {
  readonly columns: readonly Column[];
  readonly rows: readonly (readonly (string | null)[])[];
}

const key: Column = { name: "k", spark: "long", duck: "BIGINT" };
const one = (spark: string, duck: string, values: readonly (string | null)[]): Case => ({
  columns: [key, { name: "v", spark, duck }],
  rows: values.map((v, i) => [String(i), v]),
});

const ALLOWED: Record<string, Case> = {
  long: one("long", "BIGINT", ["0", "-1", "9223372036854775807", "-9223372036854775808", null]),
  integer: one("integer", "INTEGER", ["2147483647", "-2147483648", "7", null]),
  short: one("short", "SMALLINT", ["32767", "-32768", null]),
  byte: one("byte", "TINYINT", ["127", "-128", null]),
  string: one("string", "VARCHAR", [
    "",
    'a"b',
    "back\\slash \\\\ twice",
    "é日本語 ünïcödé",
    "😀 \u{1F680} beyond the BMP",
    "\u0001\u001f control",
    "new\nline\ttab\rcr\b\f",
    "del\u007f",
    "line\u2028separator\u2029",
    "</script> / slash",
    "'single' quotes",
    '{"json": [1, 2]}',
    null,
  ]),
  boolean: one("boolean", "BOOLEAN", ["true", "false", null]),
  date: one("date", "DATE", ["2024-02-29", "1970-01-01", "0001-01-01", "1899-12-31", "9999-12-31", null]),
  timestamp_ntz: one("timestamp_ntz", "TIMESTAMP", [
    "2024-01-01 12:00:00",
    "2024-01-01 12:00:00.5",
    "2024-01-01 12:00:00.000001",
    "2024-01-01 12:00:00.123456",
    "2024-01-01 12:00:00.120000",
    "1970-01-01 00:00:00",
    "1900-06-30 23:59:59.999999",
    "9999-12-31 23:59:59",
    null,
  ]),
};

/** Every allowed type in one row, under names that need escaping. */
const MIXED: Case = {
  columns: [
    key,
    { name: 'naïve "name"', spark: "string", duck: "VARCHAR" },
    { name: "when", spark: "timestamp_ntz", duck: "TIMESTAMP" },
    { name: "day", spark: "date", duck: "DATE" },
    { name: "flag", spark: "boolean", duck: "BOOLEAN" },
    { name: "n", spark: "integer", duck: "INTEGER" },
  ],
  rows: [
    ["1", "bob", "2026-01-01 00:00:00.25", "2026-01-01", "true", "3"],
    ["2", null, null, null, null, null],
    ["-3", 'a"\\', "2026-12-31 23:59:59", "2000-02-29", "false", "-2147483648"],
  ],
};

/** Types left out, each with a value whose JSON differs. */
const LEFT_OUT: Record<string, Case> = {
  decimal: one("decimal(10,2)", "DECIMAL(10,2)", ["1.50"]),
  double: one("double", "DOUBLE", ["1e20", "NaN"]),
  float: one("float", "FLOAT", ["1e20"]),
  timestamp: one("timestamp", "TIMESTAMPTZ", ["2024-01-01 12:00:00"]),
};

async function sparkHashes(cases: readonly Case[]): Promise<{ json: string; hash: string }[][]> {
  const child = spawn(process.env["EBB_SPARK_PYTHON"]!, [path.join(import.meta.dirname, "spark_cdc_tie.py")]);
  let out = "";
  let log = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-5000)));
  child.stdin.end(
    JSON.stringify({
      cases: cases.map((c) => ({
        columns: c.columns.map((col) => ({ name: col.name, type: col.spark })),
        rows: c.rows,
      })),
    }),
  );
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`spark_cdc_tie.py exited ${code}: ${log}`);
  return JSON.parse(out) as { json: string; hash: string }[][];
}

async function duckHashes(cases: readonly Case[]): Promise<{ json: string; hash: string }[][]> {
  const duck = await (await DuckDBInstance.create(":memory:")).connect();
  try {
    const answers: { json: string; hash: string }[][] = [];
    for (const c of cases) {
      const rows: { json: string; hash: string }[] = [];
      for (const row of c.rows) {
        const fields = c.columns
          .map(
            (col, i) =>
              `${quoteIdentifier(col.name)} := CAST(${row[i] === null ? "NULL" : quoteLiteral(row[i]!)} AS ${col.duck})`,
          )
          .join(", ");
        // cdc-statements.ts batchEventsSql's tie hash, on the same values.
        const reader = await duck.runAndReadAll(
          `SELECT to_json(r)::VARCHAR AS json, md5(to_json(r)) AS hash FROM (SELECT struct_pack(${fields}) AS r)`,
        );
        rows.push(reader.getRowObjectsJson()[0] as { json: string; hash: string });
      }
      answers.push(rows);
    }
    return answers;
  } finally {
    duck.closeSync();
  }
}

describe.skipIf(!sparkEngineReady)("the AUTO CDC tie hash on Spark", () => {
  it("is DuckDB's for every type the job breaks ties on, and differs for those it leaves to the apply", async () => {
    expect(Object.keys(ALLOWED).sort()).toEqual([...TIE_HASH_TYPES].sort());
    const cases = [...Object.values(ALLOWED), MIXED, ...Object.values(LEFT_OUT)];
    const [spark, duck] = await Promise.all([sparkHashes(cases), duckHashes(cases)]);
    const allowed = Object.values(ALLOWED).length + 1;
    for (let i = 0; i < allowed; i++)
      for (const [j, row] of cases[i]!.rows.entries())
        expect(spark[i]![j]!.hash, `${JSON.stringify(row)}: DuckDB spells ${duck[i]![j]!.json}`).toBe(
          duck[i]![j]!.hash,
        );
    for (const [n, name] of Object.keys(LEFT_OUT).entries()) {
      const i = allowed + n;
      const differs = cases[i]!.rows.some((_, j) => spark[i]![j]!.json !== duck[i]![j]!.json);
      expect(differs, `${name}: Spark ${JSON.stringify(spark[i])} DuckDB ${JSON.stringify(duck[i])}`).toBe(
        true,
      );
    }
  });
});
