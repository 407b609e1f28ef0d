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
        // Not stored: expanded where the materialized view reads it.
        type: "view",
        name: "priced_orders",
        sql: "SELECT region, amount FROM clean_orders WHERE amount IS NOT NULL",
      },
      {
        type: "materialized_view",
        name: "totals",
        sql: "SELECT region, count(*) AS orders, sum(amount) AS amount FROM priced_orders GROUP BY region",
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

    // A late file whose key sorts before the processed ones is still picked up. The default listing
    // (auto) lists after the greatest key processed and finds d.json; the next update's finds nothing
    // new, so it lists in full and finds the late file.
    await harness.land("2026/01/0-late.json", jsonLines(15, 3));
    await harness.land("2026/02/d.json", jsonLines(18, 2));
    const second = await harness.run(pipeline);
    expect(second.state).toBe("COMPLETED");
    expect(second.flows["ingest"]).toMatchObject({ batches: 1, rowsOut: 2 });
    const third = await harness.run(pipeline);
    expect(third.flows["ingest"]).toMatchObject({ batches: 1, rowsOut: 3 });

    const fourth = await harness.run(pipeline);
    expect(fourth.flows["ingest"]).toMatchObject({ batches: 0 });
    expect(fourth.flows["clean"]).toMatchObject({ batches: 0 });

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
    await expect(harness.rows(pipeline, "priced_orders")).rejects.toThrow(/no Delta table/);
  });

  it("records the update's states, definition version and events", async () => {
    const pipeline = await harness.validate(definition());
    await harness.land("2026/03/e.json", jsonLines(20, 4));
    const result = await harness.run(pipeline);
    expect(result.state).toBe("COMPLETED");
    const { updates, events } = harness.plane;
    expect(await updates.get(harness.pipelineId, result.updateId)).toMatchObject({
      state: "COMPLETED",
      definitionVersion: 1,
    });
    const ofType = async (eventType: string) =>
      (
        await events.query(
          harness.pipelineId,
          { eventType, updateId: result.updateId, order: "asc" },
          { limit: 100 },
        )
      ).items;
    expect((await ofType("create_update"))[0]?.details).toMatchObject({
      create_update: { definition_version: 1 },
    });
    expect((await ofType("update_progress")).map((e) => e.details["update_progress"])).toEqual(
      ["INITIALIZING", "RUNNING", "COMPLETED"].map((state) => ({ state })),
    );
    expect((await ofType("planning_information"))[0]?.details).toMatchObject({
      planning_information: { levels: [["raw_orders"], ["clean_orders"], ["priced_orders"], ["totals"]] },
    });
    const batches = (await ofType("flow_progress")).filter((e) => e.origin.batch_id !== undefined);
    const ingest = batches.find((e) => e.origin.flow_name === "ingest")!;
    expect(ingest.level).toBe("METRICS");
    expect(ingest.details).toMatchObject({
      flow_progress: {
        metrics: { num_input_rows: 4, num_output_rows: 4 },
        batch: {
          seq: ingest.origin.batch_id,
          end_offset: { kind: "files", fileCount: 6 },
          duration_ms: expect.any(Number),
        },
      },
    });
    const clean = batches.find((e) => e.origin.flow_name === "clean")!;
    expect(clean.details).toMatchObject({
      flow_progress: {
        batch: { start_offset: { kind: "table" }, end_offset: { kind: "table", rowsRead: 0 } },
      },
    });
  });

  it("records a query's failure with its own code, naming the flow, DuckDB's candidates and the way out", async () => {
    const broken = definition();
    (broken.datasets[1] as { flows: { sql: string }[] }).flows[0]!.sql = "SELECT no_such_column FROM source";
    await harness.land("2026/04/f.json", jsonLines(30, 1));
    const result = await harness.run(await harness.validate(broken));
    expect(result.state).toBe("FAILED");
    expect(await harness.plane.updates.get(harness.pipelineId, result.updateId)).toMatchObject({
      state: "FAILED",
      error: {
        errorCode: "QUERY_FAILED",
        message: expect.stringMatching(
          /^the SQL of flow "clean" failed: Binder Error: .*no_such_column.* Candidate bindings: .*; fix the query .* run the update again$/,
        ),
      },
    });
    const failed = (
      await harness.plane.events.query(
        harness.pipelineId,
        { eventType: "update_progress", updateId: result.updateId, levels: ["ERROR"] },
        { limit: 10 },
      )
    ).items;
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error?.exceptions[0]).toMatchObject({
      class_name: "QueryFailedError",
      message: expect.stringMatching(/flow "clean" failed: .*no_such_column/),
      stack: expect.stringMatching(/QueryFailedError/),
    });
  });
});
