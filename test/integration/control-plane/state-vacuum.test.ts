import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testObjectStore } from "../../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * VACUUM of a pipeline's table through the API also vacuums the state of the flows writing it: the
 * state versions of HEAD and of every live rewind point's checkpoint are kept (with every file they
 * list), the rest goes (a version no point names, a file a crashed batch left). Afterwards a rewind to
 * the oldest live point still restores its state, and the replay starts from it.
 */

const SCHEMA = { id: "BIGINT", ts: "TIMESTAMP" };

describe("VACUUM of operator state", () => {
  let cp: TestControlPlane;
  let pipelineId: string;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const ids = async () =>
    (await cp.client.query("statevac.clicks.clicks", { sql: "SELECT id FROM t ORDER BY id" })).rows.map(
      (r) => r["id"],
    );
  const vacuum = (dryRun: boolean) =>
    cp.client.vacuum("statevac.clicks.clicks", {
      retain_hours: 0,
      allow_short_retention: true,
      dry_run: dryRun,
    });

  it("keeps the state live points need, deletes the rest; the oldest point still restores its state", async () => {
    const landing = `${cp.landing}/statevac`;
    await mkdir(landing, { recursive: true });
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "statevac",
      catalog: "statevac",
      schema: "clicks",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "clicks",
            flows: [
              {
                name: "dedup",
                source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
                drop_duplicates: { keys: ["id"] },
                options: { max_files_per_batch: 1 },
                sql: "SELECT id, ts FROM source",
              },
            ],
          },
        ],
      },
    }));
    await cp.land("statevac/001.json", [{ id: 1 }, { id: 2 }]);
    await run();
    const oldest = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    await cp.land("statevac/002.json", [{ id: 2 }, { id: 3 }]);
    await cp.land("statevac/003.json", [{ id: 1 }, { id: 4 }]);
    await run();
    const atOldest = await cp.client.flowState(pipelineId, "dedup", { rewind_point_id: oldest });
    const head = await cp.client.flowState(pipelineId, "dedup");
    // Checkpoint 2 ran inside the second update: no point names it.
    const unneeded = (await cp.client.flowState(pipelineId, "dedup", { checkpoint_seq: 2 })).state_version!;
    expect([atOldest.checkpoint_seq, head.checkpoint_seq]).toEqual([1, 3]);
    const orphan = `state/${pipelineId}/dedup/0000000009-orphan.parquet`;
    await testObjectStore("").put(orphan, new Uint8Array([1, 2, 3]));

    const planned = await vacuum(true);
    expect(planned.state_files).toEqual(expect.arrayContaining([unneeded, orphan]));
    for (const live of [atOldest.state_version!, head.state_version!])
      expect(planned.state_files).not.toContain(live);
    expect(await testObjectStore("").head(orphan)).toBeDefined();

    const done = await vacuum(false);
    expect(done.state_files.sort()).toEqual([...planned.state_files].sort());
    expect(await testObjectStore("").head(orphan)).toBeUndefined();
    const gone = await cp.client.flowState(pipelineId, "dedup", { checkpoint_seq: 2 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(gone).toMatchObject({ errorCode: "STATE_VERSION_MISSING" });
    expect((await vacuum(false)).state_files).toEqual([]);

    // The oldest point's state survived: the rewind restores it, and the replay drops 1 and 2 again.
    await run({ rewind_spec: { rewind_point_id: oldest } });
    expect((await cp.client.flowState(pipelineId, "dedup")).rows).toEqual(atOldest.rows);
    expect(await ids()).toEqual([1, 2]);
    await run();
    expect(await ids()).toEqual([1, 2, 3, 4]);
  });
});
