import { afterAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/** One streaming table (partitioned) written by two flows, each from its own landing folder and owning its rows. */
describe("a shared streaming table", () => {
  const harness = new EngineHarness();
  afterAll(() => harness.close());

  it("takes both flows' rows once each, with a txn per flow", async () => {
    const pipeline = await harness.validate({
      name: "shared",
      catalog: "main",
      schema: "shared",
      datasets: [
        {
          type: "streaming_table",
          name: "events",
          partition_by: ["origin"],
          flows: ["eu", "us"].map((region) => ({
            name: `from_${region}`,
            source: {
              type: "auto_loader",
              path: `${harness.landingUri}${region}/`,
              format: "json",
              schema: { id: "BIGINT", amount: "BIGINT" },
            },
            sql: `SELECT id, amount, '${region}' AS origin FROM source`,
            owns: `origin = '${region}'`,
            options: { max_files_per_batch: 1 },
          })),
        },
      ],
    });
    await harness.land("eu/1.json", jsonLines(1, 3));
    await harness.land("eu/2.json", jsonLines(4, 3));
    await harness.land("us/1.json", jsonLines(100, 2));
    const first = await harness.run(pipeline);
    expect(first.state).toBe("COMPLETED");
    expect(first.flows["from_eu"]).toMatchObject({ batches: 2, rowsOut: 6 });
    expect(first.flows["from_us"]).toMatchObject({ batches: 1, rowsOut: 2 });

    await harness.land("us/2.json", jsonLines(102, 1));
    const second = await harness.run(pipeline, { selection: ["from_us"] });
    expect(second.flows).toEqual({ from_us: expect.objectContaining({ batches: 1, rowsOut: 1 }) });

    const rows = await harness.rows(pipeline, "events", "id");
    expect(rows.filter((r) => r["origin"] === "eu").map((r) => Number(r["id"]))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rows.filter((r) => r["origin"] === "us").map((r) => Number(r["id"]))).toEqual([100, 101, 102]);

    const table = await DeltaTable.open(new DatasetCatalog(pipeline, harness.store).tableStore("events"));
    const txns = Object.fromEntries([...table.snapshot.txns].map(([appId, txn]) => [appId, txn.version]));
    const partitions = [...table.snapshot.files.values()].map((file) => file.partitionValues["origin"]);
    expect(new Set(partitions)).toEqual(new Set(["eu", "us"]));
    await table.close();
    expect(txns).toEqual({ [`${harness.pipelineId}/from_eu`]: 2, [`${harness.pipelineId}/from_us`]: 2 });
  });
});
