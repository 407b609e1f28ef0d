import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { expressionText } from "../../../shared/pipeline/expression-text.ts";

/**
 * Expressions read back from DuckDB's own parse tree as the SQL a user writes: each parses to a tree
 * that `expressionText` renders as expected, and the rendering parses to the same tree again.
 */

describe("an expression's parse tree as SQL text", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  /** The parse tree of `expression`, without the positions (which differ between texts). */
  const tree = async (expression: string): Promise<unknown> => {
    const [row] = await duck.rows("SELECT json_serialize_sql($1::VARCHAR) AS tree", [
      `SELECT ${expression} FROM t`,
    ]);
    const parsed = JSON.parse(String(row!["tree"])) as { statements: { node: { select_list: unknown[] } }[] };
    const [item] = parsed.statements[0]!.node.select_list;
    return JSON.parse(
      JSON.stringify(item, (key, value: unknown) => (key === "query_location" ? undefined : value)),
    );
  };

  it.each([
    ["sum(x*2)", "sum(x * 2)"],
    ["avg(a - (b + c))", "avg(a - (b + c))"],
    ["sum(-x)", "sum(-x)"],
    ["count(*)", "count(*)"],
    ["count(*) FILTER (WHERE x > 1 AND NOT y)", "count(*) FILTER (WHERE x > 1 AND NOT y)"],
    ["count(DISTINCT lower(k))", "count(DISTINCT lower(k))"],
    ["max(s || 'it''s')", "max(s || 'it''s')"],
    ["sum(CAST(x AS DECIMAL(10,2)))", "sum(CAST(x AS DECIMAL(10,2)))"],
    ["sum(x::DOUBLE * 1.5)", "sum(CAST(x AS DOUBLE) * 1.5)"],
    ["max(CASE WHEN x IS NULL THEN -1 ELSE x END)", "max(CASE WHEN x IS NULL THEN -1 ELSE x END)"],
    ["min(x % 3)", "min(x % 3)"],
    [
      "count(*) FILTER (WHERE s LIKE 'a%' OR x IN (1, 2))",
      "count(*) FILTER (WHERE s LIKE 'a%' OR x IN (1, 2))",
    ],
    [
      "sum(x) FILTER (WHERE x BETWEEN 1 AND 2 AND flag = TRUE)",
      "sum(x) FILTER (WHERE x BETWEEN 1 AND 2 AND flag = TRUE)",
    ],
    ["e.payload.amount", "e.payload.amount"],
    ["sum((a + b) * 2)", "sum((a + b) * 2)"],
    [
      "count(*) FILTER (WHERE (a OR b) AND NOT (y AND z))",
      "count(*) FILTER (WHERE (a OR b) AND NOT (y AND z))",
    ],
    ["count(*) FILTER (WHERE x + 1 > 2)", "count(*) FILTER (WHERE x + 1 > 2)"],
  ])("%s reads %s", async (written, text) => {
    const parsed = await tree(written);
    expect(expressionText(parsed)).toBe(text);
    expect(await tree(text)).toEqual(parsed);
  });

  it("writes … for a node it does not know", () => {
    expect(expressionText({ class: "SUBQUERY" })).toBe("…");
    expect(expressionText(undefined)).toBe("…");
  });
});
