import { describe, expect, it } from "vitest";
import { loadSnapshot, readHistory } from "../../../shared/delta/index.ts";
import { UpstreamRefreshedError } from "../../../shared/engine/errors.ts";
import { jsonLines, RewindHarness } from "../../support/rewind/rewind-harness.ts";
import { scenarioPipeline } from "./pipeline-definitions.ts";

const ids = (rows: Record<string, unknown>[]) => rows.map((r) => Number(r["id"]));

async function twoUpdates(resetModes: Record<string, string> = {}) {
  const h = new RewindHarness();
  const definition = scenarioPipeline(h.landingUri);
  for (const dataset of definition.datasets) {
    const mode = resetModes[dataset.name];
    if (mode) (dataset as { reset_mode?: string }).reset_mode = mode;
  }
  await h.deploy(definition);
  for (let i = 0; i < 2; i++) {
    await h.land(`f${i}.json`, jsonLines(i * 3 + 1, 3));
    await h.run();
  }
  return h;
}

/** A pipeline with a shared sink: `events` written by an `eu` and a `us` flow, each owning its rows. */
async function sharedSink() {
  const h = new RewindHarness();
  const definition = scenarioPipeline(h.landingUri);
  definition.datasets.push({
    name: "events",
    type: "streaming_table",
    flows: [
      {
        name: "eu_events",
        source: { type: "stream", dataset: "raw" },
        sql: "SELECT * FROM source WHERE region = 'eu'",
        owns: "region = 'eu'",
      },
      {
        name: "us_events",
        source: { type: "stream", dataset: "raw" },
        sql: "SELECT * FROM source WHERE region = 'us'",
        owns: "region = 'us'",
      },
    ],
  } as never);
  await h.deploy(definition);
  await h.land("f.json", jsonLines(1, 6));
  await h.run();
  return h;
}

describe("refresh and reset", () => {
  it("FULL with DROP recreates the table (a new identity) and reprocesses everything once", async () => {
    const h = await twoUpdates();
    const before = await loadSnapshot(h.tableStore("cleaned"));
    await h.refresh({ refresh: "full" });
    const after = await loadSnapshot(h.tableStore("cleaned"));
    expect(after.metadata.id).not.toBe(before.metadata.id);
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await h.eventsOf("dataset_reset")).map((e) => e.origin.dataset_name)).toEqual([
      "raw",
      "cleaned",
      "totals",
    ]);
  });

  it("TRUNCATE is one commit removing every file; identity, schema and history stay", async () => {
    const h = await twoUpdates({ cleaned: "TRUNCATE" });
    const before = await loadSnapshot(h.tableStore("cleaned"));
    await h.refresh({ refresh: "RESET", selection: ["cleaned"] });
    const after = await loadSnapshot(h.tableStore("cleaned"));
    expect(after.version).toBe(before.version + 1);
    expect(after.metadata).toEqual(before.metadata);
    expect(after.files.size).toBe(0);
    const [truncate] = await readHistory(h.tableStore("cleaned"), { limit: 1 });
    expect(truncate!.operation).toBe("TRUNCATE");
    expect(truncate!.operationMetrics).toMatchObject({ numRemovedFiles: String(before.files.size) });
  });

  it("RESET resets and runs nothing; the next run reprocesses from the root", async () => {
    const h = await twoUpdates();
    await h.refresh({ refresh: "RESET", selection: ["cleaned"], reset_mode: "DROP" });
    expect(await h.rows("cleaned")).toEqual([]);
    expect((await h.checkpoints.head({ pipelineId: h.pipelineId, flowId: "clean" })).seq).toBe(0);
    expect(ids(await h.rows("raw"))).toEqual([1, 2, 3, 4, 5, 6]);
    await h.run();
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("a streaming reader of a fully refreshed dataset that was not refreshed fails, saying to refresh it too", async () => {
    const h = await twoUpdates();
    await h.refresh({ refresh: "RESET", selection: ["raw"] });
    await h.land("f2.json", jsonLines(7, 3));
    await expect(h.run()).rejects.toThrow(UpstreamRefreshedError);
    await expect(h.run()).rejects.toThrow(/fully refresh this flow's dataset too/);
    expect((await h.eventsOf("warning")).map((e) => e.message)).toEqual([
      expect.stringMatching(/cleaned reads raw as a stream.*fully refresh cleaned too/),
    ]);
    await h.refresh({ full_refresh_selection: ["cleaned"] });
    expect(ids(await h.rows("cleaned"))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("a checkpoint reset keeps the table and continues from the start, with a warning that an append flow re-appends", async () => {
    const h = await twoUpdates();
    await h.refresh({ reset_checkpoint_selection: ["clean"] });
    expect(ids(await h.rows("cleaned"))).toEqual([1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]);
    expect((await h.eventsOf("warning"))[0]!.message).toMatch(/flow clean gets a fresh checkpoint/);
  });

  it("a shared sink: FULL of one writer deletes only its rows and reprocesses them; RESET with an override empties the table", async () => {
    const h = await sharedSink();
    expect(ids(await h.rows("events"))).toEqual([1, 3, 4, 6]); // us: 1, 4; eu: 3, 6
    const usBefore = (await h.rows("events")).filter((r) => r["region"] === "us");
    await h.refresh({ full_refresh_selection: ["eu_events"] });
    const [del, write] = await readHistory(h.tableStore("events"), { limit: 2 }).then((entries) =>
      entries.reverse(),
    );
    expect(del!.operation).toBe("DELETE");
    // Recorded as Spark's streaming sink records a batch: the query is the flow, the epoch its batch.
    expect(write).toMatchObject({
      operation: "STREAMING UPDATE",
      operationParameters: {
        outputMode: "Append",
        queryId: expect.stringMatching(/\/eu_events$/),
        epochId: expect.stringMatching(/^\d+$/),
      },
      operationMetrics: { numAddedFiles: "1", numRemovedFiles: "0" },
    });
    expect((await h.rows("events")).filter((r) => r["region"] === "us")).toEqual(usBefore);
    expect(ids(await h.rows("events"))).toEqual([1, 3, 4, 6]);

    await h.refresh({ refresh: "RESET", selection: ["us_events"], reset_mode: "TRUNCATE" });
    expect(await h.rows("events")).toEqual([]);
  });
});
