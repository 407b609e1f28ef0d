import { afterAll, describe, expect, it } from "vitest";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/**
 * The pipeline setting `cloudFiles.useIncrementalListing` (Databricks' auto_loader option) lists the
 * path of every auto_loader flow that sets no `use_incremental_listing`; a flow's own option wins.
 * Under `true` a late name (sorting before one processed) is never seen; under `false` at once.
 */
describe("cloudFiles.useIncrementalListing in the pipeline configuration", () => {
  const harness = new EngineHarness();
  afterAll(() => harness.close());

  const flow = (name: string, folder: string, options?: Record<string, unknown>) => ({
    type: "streaming_table",
    name,
    flows: [
      {
        name: `ingest_${name}`,
        source: { type: "auto_loader", path: `${harness.landingUri}${folder}/`, format: "json" },
        sql: "SELECT * FROM source",
        ...(options ? { options } : {}),
      },
    ],
  });

  it("sets the listing of the flows without their own", async () => {
    const pipeline = await harness.validate({
      name: "listing setting",
      catalog: "main",
      schema: "listing",
      configuration: { "cloudFiles.useIncrementalListing": "true" },
      datasets: [flow("grows", "grows"), flow("own", "own", { use_incremental_listing: false })],
    });
    for (const folder of ["grows", "own"]) await harness.land(`${folder}/b.json`, jsonLines(0, 2));
    expect((await harness.run(pipeline)).error).toBeUndefined();
    for (const folder of ["grows", "own"]) await harness.land(`${folder}/a.json`, jsonLines(2, 3));
    const second = await harness.run(pipeline);
    expect(second.flows["ingest_grows"]).toMatchObject({ batches: 0 });
    expect(second.flows["ingest_own"]).toMatchObject({ batches: 1, rowsOut: 3 });
  });
});
