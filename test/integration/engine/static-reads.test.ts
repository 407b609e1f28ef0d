import { afterAll, describe, expect, it } from "vitest";
import { stopPipeline } from "../../../shared/control/updates/stop-update.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/** A flow's SQL joins its micro-batch with other datasets' current snapshots; an update can be stopped. */
describe("static reads and stopping", () => {
  const harness = new EngineHarness();
  afterAll(() => harness.close());

  const definition = () => ({
    name: "static reads",
    catalog: "main",
    schema: "static_reads",
    datasets: [
      {
        type: "streaming_table",
        name: "regions",
        flows: [
          {
            name: "load_regions",
            source: {
              type: "auto_loader",
              path: `${harness.landingUri}regions/`,
              format: "csv",
              schema: { code: "VARCHAR", label: "VARCHAR" },
            },
            sql: "SELECT * FROM source",
          },
        ],
      },
      {
        type: "streaming_table",
        name: "orders",
        flows: [
          {
            name: "enrich",
            source: {
              type: "auto_loader",
              path: `${harness.landingUri}orders/`,
              format: "json",
              schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" },
            },
            sql: "SELECT s.id, r.label FROM source s LEFT JOIN main.static_reads.regions r ON r.code = s.region",
          },
        ],
      },
    ],
  });

  it("reads the other dataset's snapshot as of the batch", async () => {
    const pipeline = await harness.validate(definition());
    expect(pipeline.graph.levels).toEqual([["regions"], ["orders"]]);
    await harness.land("regions/r.csv", "code,label\neu,Europe\nus,United States\n");
    await harness.land("orders/1.json", jsonLines(1, 3));
    expect((await harness.run(pipeline)).state).toBe("COMPLETED");
    // apac is not a region yet: its order has no label. Later batches see later snapshots.
    await harness.land("regions/s.csv", "code,label\napac,Asia Pacific\n");
    await harness.land("orders/2.json", jsonLines(4, 3));
    expect((await harness.run(pipeline)).state).toBe("COMPLETED");
    const labels = (await harness.rows(pipeline, "orders", "id")).map((r) => [Number(r["id"]), r["label"]]);
    expect(labels).toEqual([
      [1, "United States"],
      [2, null],
      [3, "Europe"],
      [4, "United States"],
      [5, "Asia Pacific"],
      [6, "Europe"],
    ]);
  });

  it("reads CSV files without a declared schema (header names, sniffed types), two files in one batch", async () => {
    const pipeline = await harness.validate({
      name: "csv inferred",
      catalog: "main",
      schema: "csv_inferred",
      datasets: [
        {
          type: "streaming_table",
          name: "cities",
          flows: [
            {
              name: "load_cities",
              source: { type: "auto_loader", path: `${harness.landingUri}cities/`, format: "csv" },
              sql: "SELECT * FROM source",
            },
          ],
        },
      ],
    });
    await harness.land("cities/a.csv", "id,name\n1,Lyon\n2,Porto\n");
    await harness.land("cities/b.csv", "id,name\n3,Turin\n");
    expect((await harness.run(pipeline)).state).toBe("COMPLETED");
    const rows = (await harness.rows(pipeline, "cities", "id")).map((r) => [Number(r["id"]), r["name"]]);
    expect(rows).toEqual([
      [1, "Lyon"],
      [2, "Porto"],
      [3, "Turin"],
    ]);
  });

  it("stops between batches when asked: CANCELED, nothing half-done", async () => {
    const pipeline = await harness.validate(definition());
    await harness.land("orders/3.json", jsonLines(7, 2));
    // Stopped through the API's own path as the first flow is about to run.
    harness.onTask = async (state) => {
      if (state !== "RunFlow") return;
      harness.onTask = undefined;
      await stopPipeline(harness.plane, harness.pipelineId);
    };
    const result = await harness.run(pipeline);
    expect(result.state).toBe("CANCELED");
    expect(await harness.plane.updates.get(harness.pipelineId, result.updateId)).toMatchObject({
      state: "CANCELED",
    });
    expect(Object.values(result.flows).map((flow) => flow.batches)).not.toContain(1);
    expect((await harness.run(pipeline)).flows["enrich"]).toMatchObject({ batches: 1, rowsOut: 2 });
  });
});
