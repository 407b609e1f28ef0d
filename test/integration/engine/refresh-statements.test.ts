import { afterEach, describe, expect, it, vi } from "vitest";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { RewindHarness, jsonLines } from "../../support/rewind/rewind-harness.ts";

/**
 * The statements an update runs for a flow's batch and a view's incremental refresh: each rows SQL
 * a write takes is described once (not once for the table's schema and again for staging), and a
 * view's refreshed rows go from the sandbox's table into the view's data file, not through a Parquet
 * file of their own first. Fewer statements are most of what a small increment costs.
 */
describe("the statements of an update", () => {
  afterEach(() => vi.restoreAllMocks());

  const definition = (landingUri: string) => ({
    name: "statements",
    catalog: "main",
    schema: "statements",
    datasets: [
      {
        name: "cleaned",
        type: "streaming_table",
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: landingUri,
              format: "json",
              schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" },
            },
            sql: "SELECT id, amount, upper(region) AS region FROM source",
          },
        ],
      },
      {
        name: "totals",
        type: "materialized_view",
        sql: "SELECT region, count(*) AS n, sum(amount) AS total FROM cleaned GROUP BY region",
      },
    ],
  });

  /** The SQL of every statement run while `work` runs. */
  const statementsOf = async <T>(work: () => Promise<T>): Promise<{ result: T; sql: string[] }> => {
    const sql: string[] = [];
    const run = DuckSession.prototype.run;
    const rows = DuckSession.prototype.rows;
    vi.spyOn(DuckSession.prototype, "run").mockImplementation(function (this: DuckSession, text, params) {
      sql.push(text);
      return run.call(this, text, params);
    });
    vi.spyOn(DuckSession.prototype, "rows").mockImplementation(function (this: DuckSession, text, params) {
      sql.push(text);
      return rows.call(this, text, params);
    });
    const result = await work();
    vi.restoreAllMocks();
    return { result, sql };
  };

  it("describes each written query once, and writes a view's rows without exporting them first", async () => {
    const h = new RewindHarness();
    await h.deploy(definition(h.landingUri));
    await h.land("a.json", jsonLines(0, 6));
    await h.run();
    await h.land("b.json", jsonLines(6, 3));
    const { result, sql } = await statementsOf(() => h.run());

    expect(result.views["totals"]).toMatchObject({ recomputed: true, refresh: "INCREMENTAL", rows: 3 });
    const describes = sql.filter((s) => /^DESCRIBE \(/.test(s));
    // The flow's rows, once; the view's rows not at all (its refresh described its query already).
    expect(describes).toHaveLength(1);
    expect(describes.some((s) => s.includes("__ebb_view_output"))).toBe(false);
    expect(sql.filter((s) => /^COPY "__ebb_view_output"|read_parquet\('[^']*'\)\)$/.test(s))).toEqual([]);
    expect(sql.filter((s) => /count\(\*\)::BIGINT AS n FROM __ebb_view_output/.test(s))).toEqual([]);
    // The view's query and partials were described by the refresh before, which kept their types.
    expect(sql.filter((s) => /^DESCRIBE SELECT/.test(s) && !s.includes("read_parquet("))).toEqual([]);
    expect((await h.rows("totals", "region")).map((r) => [r["region"], Number(r["n"])])).toEqual([
      ["APAC", 3],
      ["EU", 3],
      ["US", 3],
    ]);
  });

  it("describes a redefined view again, even where only a name changed or its partials stay the same", async () => {
    const h = new RewindHarness();
    const base = definition(h.landingUri);
    const withView = (sql: string) => ({
      ...base,
      datasets: [base.datasets[0], { ...base.datasets[1], sql }],
    });
    await h.deploy(base);
    await h.land("a.json", jsonLines(0, 6));
    await h.run();
    // The same partials (count and sum of amount by region), the output's names changed.
    await h.deploy(
      withView("SELECT region, count(*) AS orders, sum(amount) AS revenue FROM cleaned GROUP BY region"),
    );
    await h.land("b.json", jsonLines(6, 3));
    await h.run();
    const renamed = await h.rows("totals", "region");
    expect(Object.keys(renamed[0]!)).toEqual(["region", "orders", "revenue"]);
    expect(renamed.map((r) => [r["region"], Number(r["orders"])])).toEqual([
      ["APAC", 3],
      ["EU", 3],
      ["US", 3],
    ]);
    // Other partials and types: a mean where a sum was.
    await h.deploy(
      withView("SELECT region, count(*) AS orders, avg(amount) AS mean FROM cleaned GROUP BY region"),
    );
    await h.land("c.json", jsonLines(9, 3));
    const { result } = await statementsOf(() => h.run());
    expect(result.views["totals"]).toMatchObject({ recomputed: true });
    await h.land("d.json", jsonLines(12, 3));
    expect((await h.run()).views["totals"]).toMatchObject({ refresh: "INCREMENTAL" });
    const averaged = await h.rows("totals", "region");
    expect(Object.keys(averaged[0]!)).toEqual(["region", "orders", "mean"]);
    expect(averaged.map((r) => [r["region"], Number(r["orders"]), r["mean"]])).toEqual([
      ["APAC", 5, 80],
      ["EU", 5, 60],
      ["US", 5, 70],
    ]);
  });
});
