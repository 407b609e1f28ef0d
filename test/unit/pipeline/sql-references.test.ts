import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqlReferenceParser, qualifiedName } from "../../../shared/pipeline/sql-references.ts";

let parser: SqlReferenceParser;
beforeAll(async () => {
  parser = await SqlReferenceParser.open();
});
afterAll(() => parser.close());

async function referencesOf(sql: string): Promise<string[]> {
  const analysis = await parser.analyze(sql);
  if (!analysis.ok) throw new Error(analysis.message);
  return analysis.references.map(qualifiedName).sort();
}

describe("SqlReferenceParser", () => {
  it("finds tables in FROM, joins, subqueries and set operations", async () => {
    const sql = `
      SELECT a.x FROM a JOIN b ON a.id = b.id LEFT JOIN (SELECT * FROM c) AS cc ON cc.id = a.id
      WHERE a.y IN (SELECT y FROM d) AND EXISTS (SELECT 1 FROM e WHERE e.z = a.z)
      UNION ALL SELECT x FROM f
      EXCEPT SELECT x FROM g`;
    expect(await referencesOf(sql)).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
  });

  it("does not count CTE names, but counts the tables inside CTEs", async () => {
    const sql = `
      WITH recent AS (SELECT * FROM orders WHERE day > 1),
           totals AS (SELECT sum(amount) FROM recent)
      SELECT * FROM totals, (WITH inner_cte AS (SELECT 1) SELECT * FROM inner_cte) q`;
    expect(await referencesOf(sql)).toEqual(["orders"]);
  });

  it("counts a name as a table outside the scope of the CTE that shadows it", async () => {
    const sql = `SELECT * FROM (WITH orders AS (SELECT 1 AS x) SELECT * FROM orders) q JOIN orders o ON true`;
    expect(await referencesOf(sql)).toEqual(["orders"]);
    expect(await referencesOf(`SELECT * FROM (WITH t AS (SELECT 1) SELECT * FROM t) q`)).toEqual([]);
  });

  it("handles recursive CTEs", async () => {
    const sql = `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r`;
    expect(await referencesOf(sql)).toEqual([]);
  });

  it("ignores names in strings and comments, folds case, keeps qualifiers", async () => {
    const sql = `-- FROM secret\nSELECT 'FROM hidden' AS s FROM Main.Sales.Orders /* JOIN other */, sales.customers`;
    expect(await referencesOf(sql)).toEqual(["main.sales.orders", "sales.customers"]);
  });

  it("does not report table functions as tables", async () => {
    expect(await referencesOf(`SELECT * FROM read_csv('/etc/passwd')`)).toEqual([]);
  });

  it("refuses what is not exactly one SELECT", async () => {
    expect(await parser.analyze("SELEC 1")).toEqual({
      ok: false,
      message: expect.stringMatching(/syntax error/),
    });
    expect(await parser.analyze("DROP TABLE orders")).toEqual({
      ok: false,
      message: "must be a single SELECT statement (a query), not DDL or DML",
    });
    expect(await parser.analyze("SELECT 1; SELECT 2")).toEqual({
      ok: false,
      message: "must be exactly one SELECT statement (remove the extra statements after ';')",
    });
  });

  it("can be shared by concurrent callers (the control plane keeps one per process)", async () => {
    const analyses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => parser.analyze(`SELECT * FROM t${i} JOIN u${i} USING (id)`)),
    );
    analyses.forEach((analysis, i) =>
      expect(analysis).toMatchObject({ ok: true, references: [{ table: `t${i}` }, { table: `u${i}` }] }),
    );
  });
});
