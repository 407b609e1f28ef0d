import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RefreshRequestInput } from "../../../shared/rewind/refresh-request.ts";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * A file an auto_loader batch was planned with, removed before the batch could run (here, as a user
 * would: the batch failed on the file's malformed records, and the file was deleted). The next
 * incremental update fails with SOURCE_FILE_GONE naming the file and the refreshes that recover; each
 * recipe it names, and every refresh the issue saw fail (a checkpoint reset, FULL, RESET), recovers the
 * pipeline: the update completes, the table holds what the recipe promises, and the next file lands.
 */

describe("a planned file removed from the landing folder", () => {
  let cp: TestControlPlane;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  interface Wedged {
    readonly run: (
      body?: RefreshRequestInput,
    ) => Promise<{ state: string; error?: { error_code?: string; message?: string } }>;
    readonly land: (file: string, content: string) => Promise<void>;
    readonly ids: () => Promise<unknown[]>;
  }

  const lines = (...ids: number[]) => ids.map((id) => JSON.stringify({ id })).join("\n") + "\n";

  /**
   * A pipeline whose batch of `1.json` and a malformed `2.json` failed and whose `2.json` was then
   * deleted; with `committedFirst`, `1.json` was committed in a batch of its own before.
   */
  async function wedge(schema: string, committedFirst = false): Promise<Wedged> {
    const folder = path.join(cp.landing, schema);
    await mkdir(folder);
    const { pipeline_id: pipelineId } = await cp.client.createPipeline(
      ingestPipeline({ name: `removed file ${schema}`, catalog: "gone", schema, path: folder }),
    );
    const run = async (body?: RefreshRequestInput) => {
      const { update_id } = await cp.client.startUpdate(pipelineId, body);
      return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    };
    const land = (file: string, content: string) => writeFile(path.join(folder, file), content);
    const ids = async () =>
      (await cp.client.query(`gone.${schema}.raw`, { sql: "SELECT id FROM t ORDER BY id" })).rows.map(
        (r) => r["id"],
      );
    await land("1.json", lines(1, 2));
    if (committedFirst) expect((await run()).state).toBe("COMPLETED");
    await land("2.json", '{"id": 3}\n{not json\n');
    const malformed = await run();
    expect(malformed).toMatchObject({
      state: "FAILED",
      error: { error_code: "MALFORMED_RECORD_IN_PARSING" },
    });
    expect(malformed.error?.message).toContain("malformed record");
    await rm(path.join(folder, "2.json"));
    for (let attempt = 0; attempt < 2; attempt++) {
      const gone = await run();
      expect(gone).toMatchObject({ state: "FAILED", error: { error_code: "SOURCE_FILE_GONE" } });
      expect(gone.error?.message).toContain(
        `flow "ingest" planned its next batch with the file 2.json under ${folder}`,
      );
      expect(gone.error?.message).toContain(`{"full_refresh_selection": ["raw"]}`);
      expect(gone.error?.message).toContain(`{"reset_checkpoint_selection": ["ingest"]}`);
    }
    return { run, land, ids };
  }

  /** The recovered pipeline runs on: a new file lands in the next incremental update. */
  async function landsTheNextFile(pipeline: Wedged, before: unknown[]) {
    await pipeline.land("9.json", lines(9));
    const next = await pipeline.run();
    expect(next.state, next.error?.message).toBe("COMPLETED");
    expect(await pipeline.ids()).toEqual([...before, 9]);
  }

  it("runs the planned batch once the file is put back", async () => {
    const pipeline = await wedge("put_back");
    await pipeline.land("2.json", lines(3));
    const done = await pipeline.run();
    expect(done.state, done.error?.message).toBe("COMPLETED");
    expect(await pipeline.ids()).toEqual([1, 2, 3]);
    await landsTheNextFile(pipeline, [1, 2, 3]);
  });

  it("rebuilds the dataset from the files there are with full_refresh_selection", async () => {
    const pipeline = await wedge("full_selection", true);
    const done = await pipeline.run({ full_refresh_selection: ["raw"] });
    expect(done.state, done.error?.message).toBe("COMPLETED");
    expect(await pipeline.ids()).toEqual([1, 2]);
    await landsTheNextFile(pipeline, [1, 2]);
  });

  it("reads every file again after reset_checkpoint_selection, on a flow that committed nothing", async () => {
    const pipeline = await wedge("reset_first");
    const done = await pipeline.run({ reset_checkpoint_selection: ["ingest"] });
    expect(done.state, done.error?.message).toBe("COMPLETED");
    expect(await pipeline.ids()).toEqual([1, 2]);
    await landsTheNextFile(pipeline, [1, 2]);
  });

  it("reads every file again after reset_checkpoint_selection, keeping the rows already there", async () => {
    const pipeline = await wedge("reset_later", true);
    const done = await pipeline.run({ reset_checkpoint_selection: ["ingest"] });
    expect(done.state, done.error?.message).toBe("COMPLETED");
    expect(await pipeline.ids()).toEqual([1, 1, 2, 2]);
    await landsTheNextFile(pipeline, [1, 1, 2, 2]);
  });

  it("recovers with a FULL refresh of everything", async () => {
    const pipeline = await wedge("full_all");
    const done = await pipeline.run({ full_refresh: true });
    expect(done.state, done.error?.message).toBe("COMPLETED");
    expect(await pipeline.ids()).toEqual([1, 2]);
    await landsTheNextFile(pipeline, [1, 2]);
  });

  it("recovers with a RESET, which the next incremental update fills", async () => {
    const pipeline = await wedge("reset_all");
    const reset = await pipeline.run({ refresh: "RESET" });
    expect(reset.state, reset.error?.message).toBe("COMPLETED");
    await landsTheNextFile(pipeline, [1, 2]);
  });
});
