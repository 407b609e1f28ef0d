import { readFile } from "node:fs/promises";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { parameterLiteral, translateStatement, type TranslationContext } from "../../../shared/sql/index.ts";

/**
 * The statements API's translation: pure text in, DuckDB text and the sources it reads out. The
 * dialect is the pipelines' own (spark-to-duckdb.ts, checked against Spark by the interop corpus);
 * these are the statement's own forms and the seed's queries through it.
 */

const NOW = Date.UTC(2026, 11, 1, 12, 30, 45, 123);
const context: TranslationContext = { now: NOW };
const seedSql = (file: string) =>
  readFile(new URL(`../../support/seed-sql/${file}`, import.meta.url), "utf8");
const PIPELINE = "0b4f9c1e-2a5d-4c3b-9e8f-7a6b5c4d3e2f";

let duck: DuckSession;
beforeAll(async () => {
  duck = await DuckSession.open();
});
afterAll(() => duck.close());

/** Runs a translated statement that reads no source. */
async function value(sparkSql: string, extra: Partial<TranslationContext> = {}): Promise<unknown> {
  const { sql, sources } = translateStatement(sparkSql, { ...context, ...extra });
  expect(sources).toEqual([]);
  const [row] = await duck.rows(sql);
  return Object.values(row!)[0];
}

describe("the seed's queries", () => {
  it("the rewind-point listing reads event_log as a source, with the JSON path and the fixed now", async () => {
    const spark = (await seedSql("rewind-points.sql")).replace("<pipeline-id>", PIPELINE);
    const { sql, sources } = translateStatement(spark, context);
    expect(sources).toEqual([{ kind: "event_log", relation: "__ebb_source_1", pipelineId: PIPELINE }]);
    expect(sql).toContain("FROM __ebb_source_1");
    expect(sql).toContain(
      `JSON_EXTRACT_STRING(TRY_CAST(details AS JSON), '$.rewind_summary.dry_run')) = TRUE`,
    );
    expect(sql).toContain(`"timestamp" > CAST('2026-12-01 12:30:45.123' AS TIMESTAMP) - INTERVAL '7' DAYS`);
    expect(sql).not.toContain("event_log");
    expect(sql.trimEnd().endsWith(";")).toBe(false);
  });

  it("the onset recipe reads the change feed and the history, and computes the midpoint as Spark does", async () => {
    const { sql, sources } = translateStatement(await seedSql("onset.sql"), context);
    expect(sources).toEqual([
      {
        kind: "table_changes",
        relation: "__ebb_source_1",
        table: "catalog.schema.table",
        startingVersion: 1,
      },
      { kind: "history", relation: "__ebb_source_2", table: "catalog.schema.table" },
    ]);
    expect(sql).toContain("(SELECT * FROM __ebb_source_2 ORDER BY version DESC) AS h");
    expect(sql).not.toMatch(/table_changes|DESCRIBE|unix_timestamp|from_unixtime|date_format/);
    // The recipe's arithmetic over two commit times: each truncated to the second, averaged, truncated.
    const midpoint = await value(
      "SELECT date_format(from_unixtime((unix_timestamp(TIMESTAMP '2026-09-29 08:36:54.900') + " +
        "unix_timestamp(TIMESTAMP '2026-09-29 08:36:58.100')) / 2), 'yyyy-MM-dd HH:mm:ss')",
    );
    expect(midpoint).toBe("2026-09-29 08:36:56");
  });
});

describe("Spark forms", () => {
  it("JSON paths with fields, subscripts and quoted keys are strings, as in Spark", async () => {
    const doc = `'{"a": {"b": [10, {"c d": true}]}}'`;
    expect(await value(`SELECT j:a.b[0] FROM (SELECT ${doc} AS j)`)).toBe("10");
    expect(await value(`SELECT j:a.b[1]['c d'] FROM (SELECT ${doc} AS j)`)).toBe("true");
    expect(await value(`SELECT t.j:a.b[1]['c d'] = true FROM (SELECT ${doc} AS j) t`)).toBe(true);
    expect(await value(`SELECT j:a.missing FROM (SELECT ${doc} AS j)`)).toBeNull();
  });

  it("current_timestamp, now and current_date are the statement's start", async () => {
    expect(await value("SELECT current_timestamp()")).toEqual(new Date(NOW));
    expect(await value("SELECT current_timestamp")).toEqual(new Date(NOW));
    expect(await value("SELECT now()")).toEqual(new Date(NOW));
    expect(await value("SELECT unix_timestamp()")).toBe(Math.floor(NOW / 1000));
    expect(await value("SELECT CAST(current_date() AS VARCHAR)")).toBe("2026-12-01");
  });

  it("date functions and datetime patterns", async () => {
    expect(await value("SELECT unix_timestamp('2026-09-29 08:36:55')")).toBe(1790671015n);
    expect(await value("SELECT unix_timestamp('29/09/2026', 'dd/MM/yyyy')")).toBe(1790640000n);
    expect(await value("SELECT from_unixtime(1790671015.9)")).toBe("2026-09-29 08:36:55");
    expect(await value("SELECT from_unixtime(1790671015, 'yyyy/MM/dd')")).toBe("2026/09/29");
    expect(await value("SELECT date_format('2026-09-29 08:36:55', 'dd.MM.yy HH:mm')")).toBe("29.09.26 08:36");
    expect(await value("SELECT date_format(TIMESTAMP '2026-09-29 08:36:55.120', 'HH:mm:ss.SSS')")).toBe(
      "08:36:55.120",
    );
    expect(await value("SELECT date_format('2026-09-29', 'yyyy-MM-dd\\'T\\'HH')")).toBe("2026-09-29T00");
    expect(await value("SELECT CAST(date_sub('2026-03-01', 1) AS VARCHAR)")).toBe("2026-02-28");
    expect(await value("SELECT CAST(date_add('2026-02-28', 1) AS VARCHAR)")).toBe("2026-03-01");
    expect(await value("SELECT datediff('2026-03-01', '2026-02-01')")).toBe(28n);
    // Spark 4 (ANSI) fails on text that is not a time, as the corpus checks against Spark itself.
    await expect(value("SELECT unix_timestamp('not a time')")).rejects.toThrow(/Conversion Error/);
  });

  it("strings are Spark's (double quotes, backslash escapes); backtick identifiers are identifiers", async () => {
    expect(await value(`SELECT "it's"`)).toBe("it's");
    expect(await value(`SELECT 'a\\'b\\nc'`)).toBe("a'b\nc");
    expect(await value("SELECT `my col` FROM (SELECT 1 AS `my col`)")).toBe(1);
  });

  it("a string round-trips through the translation, whatever it holds", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), async (text) => {
        const escaped = text.replaceAll("\\", "\\\\").replaceAll("'", "\\'");
        expect(await value(`SELECT '${escaped}'`)).toBe(text.replaceAll("\0", "\0"));
      }),
      { numRuns: 200 },
    );
  });

  it("named parameter markers take their typed values; a JSON path is not a marker", async () => {
    const parameters = new Map([
      ["day", parameterLiteral("2026-09-29", "DATE")],
      ["n", parameterLiteral("41", "INT")],
      ["none", parameterLiteral(null, undefined)],
    ]);
    expect(await value("SELECT :n + 1", { parameters })).toBe(42);
    expect(await value("SELECT CAST(:day AS VARCHAR)", { parameters })).toBe("2026-09-29");
    expect(await value("SELECT :none IS NULL", { parameters })).toBe(true);
    expect(() => translateStatement("SELECT :other", { ...context, parameters })).toThrow(
      /:other has no value/,
    );
  });

  it("tables by name are sources; CTE names and one-part names without a default schema are not", () => {
    const { sql, sources } = translateStatement(
      "WITH recent AS (SELECT * FROM `demo`.sales.orders) SELECT * FROM recent JOIN sales.customers USING (id)",
      { ...context, catalog: "demo" },
    );
    expect(sources).toEqual([
      { kind: "table", relation: "__ebb_source_1", table: "demo.sales.orders" },
      { kind: "table", relation: "__ebb_source_2", table: "demo.sales.customers" },
    ]);
    expect(sql).toBe(
      "WITH recent AS (SELECT * FROM __ebb_source_1) SELECT * FROM recent JOIN __ebb_source_2 USING (id)",
    );
    const bare = translateStatement("SELECT * FROM orders", context);
    expect(bare.sources).toEqual([]);
    const defaulted = translateStatement("SELECT * FROM orders", { ...context, catalog: "c", schema: "s" });
    expect(defaulted.sources).toEqual([{ kind: "table", relation: "__ebb_source_1", table: "c.s.orders" }]);
  });

  it("a source named twice is read once", () => {
    const { sources } = translateStatement(
      "SELECT * FROM a.b.c x JOIN a.b.c y ON x.id = y.id, (DESCRIBE HISTORY a.b.c) h",
      context,
    );
    expect(sources.map((s) => s.kind)).toEqual(["table", "history"]);
  });
});

describe("refusals say what is supported", () => {
  it.each([
    ["INSERT INTO a.b.c VALUES (1)", /an? INSERT statement cannot run here/],
    ["DESCRIBE DETAIL a.b.c", /DESCRIBE DETAIL is not supported/],
    ["SELECT * FROM event_log(TABLE(a.b.c))", /event_log\(TABLE\(…\)\) is not supported/],
    ["SELECT * FROM table_changes('a.b.c', '2026-01-01')", /timestamps are not supported/],
    ["SELECT * FROM __ebb_source_1", /are Ebb's own/],
    ["SELECT 'open", /is not closed/],
    ["DESCRIBE HISTORY schema.table", /"schema.table" is not a full table name/],
    ["SELECT * FROM table_changes('t', 1)", /"t" is not a full table name/],
    ["  ;  ", /empty/],
  ])("%s", (statement, message) => {
    let error: unknown;
    try {
      translateStatement(statement, context);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ errorCode: "SQL_NOT_SUPPORTED", message: expect.stringMatching(message) });
    expect((error as Error).message).toContain("event_log('<pipeline-id>')");
  });
});

describe("statements speak the pipelines' Spark dialect", () => {
  it("casts, subscripts and JSON paths answer as Spark does", async () => {
    expect(await value("SELECT CAST(12.7 AS INT)")).toBe(12);
    expect(await value("SELECT array(10, 20, 30)[0]")).toBe(10);
    expect(await value(`SELECT get_json_object('{"a b": 1}', '$[\\'a b\\']')`)).toBe("1");
    await expect(value("SELECT CAST('12.7' AS INT)")).rejects.toThrow(/CAST_INVALID_INPUT/);
  });

  it("ORDER BY ALL orders by every output column, as in Spark 4; a column named `all` is that column", async () => {
    const rows = async (spark: string) => duck.rows(translateStatement(spark, context).sql);
    const values = "VALUES (2, 'b'), (1, 'z'), (2, 'a'), (NULL, 'c') AS t(n, s)";
    expect(await rows(`SELECT n, s FROM ${values} ORDER BY ALL`)).toEqual([
      { n: null, s: "c" },
      { n: 1, s: "z" },
      { n: 2, s: "a" },
      { n: 2, s: "b" },
    ]);
    expect((await rows(`SELECT n, s FROM ${values} ORDER BY ALL DESC LIMIT 1`))[0]).toEqual({ n: 2, s: "b" });
    const named = await rows(`SELECT s AS \`all\`, n FROM ${values} ORDER BY \`all\``);
    expect(named.map((row) => row["all"])).toEqual(["a", "b", "c", "z"]);
  });
});

describe("the dialect's refusals name their place", () => {
  it.each([
    ["SELECT date_format(ts, 'yyyy QQQ') FROM x", /line 1, column 8: .*uses "QQQ"/],
    ["SELECT date_format(ts, fmt) FROM x", /line 1, column 8: .*pattern must be a string literal/],
    [
      "SELECT list_filter(a, x -> x > 0) FROM x",
      /line 1, column 8: function list_filter is not a Spark function/,
    ],
  ])("%s", (statement, message) => {
    expect(() => translateStatement(statement, context)).toThrow(
      expect.objectContaining({ errorCode: "UNSUPPORTED_SQL", message: expect.stringMatching(message) }),
    );
  });
});

describe("Databricks' data quality query over the event log", () => {
  it("explodes from_json with a DDL schema into rows with the struct's fields, reading a:b:c paths", async () => {
    const { sql } = translateStatement(
      `SELECT e.dataset, e.name, e.passed_records, e.failed_records FROM (
         SELECT explode(from_json(details:flow_progress:data_quality:expectations,
           "array<struct<name: string, dataset: string, passed_records: int, failed_records: int>>")) e
         FROM (SELECT '{"flow_progress": {"data_quality": {"dropped_records": 1, "expectations": [
           {"name": "valid", "dataset": "orders", "passed_records": 3, "failed_records": 1},
           {"name": "known", "dataset": "orders", "passed_records": 4, "failed_records": 0}]}}}' AS details)
       ) ORDER BY e.name`,
      context,
    );
    expect(await duck.rows(sql)).toEqual([
      { dataset: "orders", name: "known", passed_records: 4, failed_records: 0 },
      { dataset: "orders", name: "valid", passed_records: 3, failed_records: 1 },
    ]);
  });

  it("maps Spark's DDL types to DuckDB's, and refuses one it does not know by name", async () => {
    expect(
      await value(
        `SELECT from_json('{"a": [1, 2], "m": {"k": 1.5}}', 'struct<a: array<bigint>, m: map<string, double>>').a[1]`,
      ),
    ).toBe(2n); // Spark subscripts count from 0
    expect(() => translateStatement(`SELECT from_json('{}', schema) FROM x`, context)).toThrow(
      /line 1, column 8: from_json's schema must be a DDL string literal/,
    );
  });
});
