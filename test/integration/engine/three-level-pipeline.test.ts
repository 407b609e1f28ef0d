import { afterAll, describe, expect, it } from "vitest";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/** auto_loader JSON → cleaned streaming table → aggregate materialized view, over several updates. */
describe("a three-level pipeline", () => {
  const harness = new EngineHarness();
  afterAll(() => harness.close());

  const definition = () => ({
    name: "orders pipeline",
    catalog: "main",
    schema: "sales",
    datasets: [
      {
        type: "streaming_table",
        name: "raw_orders",
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: harness.landingUri,
              format: "json",
              schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" },
            },
            sql: "SELECT * FROM source",
            options: { max_files_per_batch: 2 },
          },
        ],
      },
      {
        type: "streaming_table",
        name: "clean_orders",
        flows: [
          {
            name: "clean",
            source: { type: "stream", dataset: "raw_orders" },
            sql: "SELECT id, CAST(amount AS DOUBLE) / 10 AS amount, upper(region) AS region FROM source WHERE amount > 0",
            options: { max_rows_per_batch: 7 },
          },
        ],
      },
      {
        type: "materialized_view",
        name: "totals",
        sql: "SELECT region, count(*) AS orders, sum(amount) AS amount FROM clean_orders GROUP BY region",
      },
    ],
  });

  it("processes every file once across updates, and the view follows", async () => {
    const pipeline = await harness.validate(definition());
    await harness.land("2026/01/a.json", jsonLines(0, 5));
    await harness.land("2026/01/b.json", jsonLines(5, 5));
    await harness.land("2026/01/c.json", jsonLines(10, 5));

    const first = await harness.run(pipeline);
    expect(first.error).toBeUndefined();
    expect(first.state).toBe("COMPLETED");
    expect(first.flows["ingest"]).toMatchObject({ batches: 2, rowsOut: 15 });
    // 15 rows read in batches of at most 7 (7 + 7 + 1); id 0 has amount 0 and is filtered out.
    expect(first.flows["clean"]).toMatchObject({ batches: 3, rowsIn: 15, rowsOut: 14 });
    expect((await harness.rows(pipeline, "clean_orders")).length).toBe(14);

    // A late file whose key sorts before the processed ones is still picked up.
    await harness.land("2026/01/0-late.json", jsonLines(15, 3));
    await harness.land("2026/02/d.json", jsonLines(18, 2));
    const second = await harness.run(pipeline);
    expect(second.state).toBe("COMPLETED");
    expect(second.flows["ingest"]).toMatchObject({ batches: 1, rowsOut: 5 });

    const third = await harness.run(pipeline);
    expect(third.flows["ingest"]).toMatchObject({ batches: 0 });
    expect(third.flows["clean"]).toMatchObject({ batches: 0 });

    const clean = await harness.rows(pipeline, "clean_orders", "id");
    expect(clean.map((r) => Number(r["id"]))).toEqual(Array.from({ length: 19 }, (_, i) => i + 1));
    const totals = await harness.rows(pipeline, "totals", "region");
    expect(totals.map((r) => [r["region"], Number(r["orders"])])).toEqual([
      ["APAC", 6],
      ["EU", 6],
      ["US", 7],
    ]);
    const total = totals.reduce((sum, r) => sum + Number(r["amount"]), 0);
    expect(total).toBe(Array.from({ length: 19 }, (_, i) => i + 1).reduce((a, b) => a + b, 0));
  });
});
