import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Deduplication and watermarks through the HTTP API on the local runtime: a key seen in any earlier
 * batch is dropped; a rewind restores the operator state with the checkpoint, so the replay drops
 * exactly what the old timeline had seen at the point (and not what it saw after); within the
 * watermark, late rows are dropped and counted and old keys let go; changing the dedup keys is
 * refused at validate_only and at start (`INCOMPATIBLE_STATE`), and a checkpoint reset is the way out.
 */

interface BatchProgress {
  readonly state_operators: Record<string, unknown>;
  readonly event_time: { readonly watermark: string | null };
}

const ingest = (landing: string, flow: Record<string, unknown>) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "events",
      flows: [
        {
          name: "ingest",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { id: "BIGINT", v: "VARCHAR", ts: "TIMESTAMP" },
          },
          sql: "SELECT id, v, ts FROM source",
          ...flow,
        },
      ],
    },
  ],
});

describe("stateful flows through the API", () => {
  let cp: TestControlPlane;
  let seq = 0;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  const create = async (name: string, flow: Record<string, unknown>) => {
    const { pipeline_id } = await cp.client.createPipeline({
      name,
      catalog: "stateful",
      schema: name,
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: ingest(`${cp.landing}/${name}`, flow),
    });
    return pipeline_id;
  };
  const land = (name: string, rows: Record<string, unknown>[]) =>
    cp.land(`${name}/${String(++seq).padStart(3, "0")}.json`, rows);
  const run = async (pipelineId: string, body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const ids = async (schema: string) =>
    (await cp.client.query(`stateful.${schema}.events`, { sql: "SELECT id, v FROM t ORDER BY id, v" })).rows;
  /** The `flow_progress` details of the stateful batches, newest first. */
  const progress = async (pipelineId: string) =>
    (await cp.client.events(pipelineId, { max_results: 100 })).events
      .map((e) => (e.details as Record<string, unknown>)["flow_progress"] as BatchProgress | undefined)
      .filter((p): p is BatchProgress => p?.state_operators !== undefined);
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );
  const mkdir = async (name: string) => {
    const { mkdir: make } = await import("node:fs/promises");
    await make(`${cp.landing}/${name}`, { recursive: true });
  };

  it("drops keys seen in any earlier batch, and a rewind restores the seen keys with the checkpoint", async () => {
    await mkdir("dedup");
    const pipelineId = await create("dedup", { drop_duplicates: { keys: ["id"] } });
    await land("dedup", [
      { id: 1, v: "a" },
      { id: 2, v: "b" },
      { id: 2, v: "b" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    expect(await ids("dedup")).toEqual([
      { id: 1, v: "a" },
      { id: 2, v: "b" },
    ]);
    const point = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;

    await land("dedup", [
      { id: 2, v: "b" },
      { id: 3, v: "c" },
    ]);
    await land("dedup", [{ id: 4, v: "d" }]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    expect((await ids("dedup")).map((r) => r["id"])).toEqual([1, 2, 3, 4]);
    const [latest] = (await progress(pipelineId)).slice(0, 1);
    expect(latest?.state_operators).toMatchObject({ num_rows_total: 4 });

    // Back to the point: table {1, 2} and the state that had seen {1, 2}. The replay reads the two
    // later files again: 2 is dropped (seen at the point), 3 and 4 are not (seen only after it).
    const rewind = await run(pipelineId, { rewind_spec: { rewind_point_id: point } });
    expect(rewind.state, rewind.error?.message).toBe("COMPLETED");
    expect((await ids("dedup")).map((r) => r["id"])).toEqual([1, 2]);
    const replay = await run(pipelineId);
    expect(replay.state, replay.error?.message).toBe("COMPLETED");
    expect((await ids("dedup")).map((r) => r["id"])).toEqual([1, 2, 3, 4]);

    // Changing the keys no longer matches the state: refused before anything runs, at validate_only
    // and at start; a reset of the flow's checkpoint is the way out.
    const updates = (await cp.client.listUpdates(pipelineId)).updates.length;
    await cp.client.editPipeline(pipelineId, {
      definition: ingest(`${cp.landing}/dedup`, { drop_duplicates: { keys: ["id", "v"] } }),
    });
    for (const body of [{ validate_only: true }, {}]) {
      const refused = await refusal(cp.client.startUpdate(pipelineId, body));
      expect(refused).toMatchObject({ status: 409, errorCode: "INCOMPATIBLE_STATE" });
      expect((refused as Error).message).toMatch(/deduplication by \(id\).*deduplication by \(id, v\)/);
      expect((refused as Error).message).toContain("reset_checkpoint_selection");
    }
    expect((await cp.client.listUpdates(pipelineId)).updates.length).toBe(updates);
  });

  it("within the watermark: late rows are dropped and counted, a key let go once the watermark passes its event time plus the delay", async () => {
    await mkdir("late");
    const pipelineId = await create("late", {
      watermark: { column: "ts", delay: "10 minutes" },
      drop_duplicates: { keys: ["id"], within_watermark: true },
    });
    // Both kept, each key remembered until the watermark reaches its event time + 10 minutes (as
    // Spark's dropDuplicatesWithinWatermark): 1 until 12:10, 2 until 12:40. Watermark after: 12:20.
    await land("late", [
      { id: 1, v: "a", ts: "2026-01-01 12:00:00" },
      { id: 2, v: "b", ts: "2026-01-01 12:30:00" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    // 1 at 12:05 is late (before 12:20); 2 is a duplicate; 3 moves the watermark to 12:50. The
    // watermark this batch started with (12:20) lets 1 go.
    await land("late", [
      { id: 1, v: "late", ts: "2026-01-01 12:05:00" },
      { id: 2, v: "dup", ts: "2026-01-01 12:31:00" },
      { id: 3, v: "c", ts: "2026-01-01 13:00:00" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    // 2 again, not late, past its event time (12:30) but not past 12:40 when the batch began:
    // still a duplicate (forgetting a key at its event time kept this row). The batch's watermark,
    // 12:50, then lets 2 go.
    await land("late", [{ id: 2, v: "dup again", ts: "2026-01-01 12:55:00" }]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    // Once let go, 2 is new again.
    await land("late", [{ id: 2, v: "again", ts: "2026-01-01 12:56:00" }]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    expect(await ids("late")).toEqual([
      { id: 1, v: "a" },
      { id: 2, v: "again" },
      { id: 2, v: "b" },
      { id: 3, v: "c" },
    ]);
    const batches = (await progress(pipelineId)).reverse();
    expect(batches.map((b) => b.state_operators["num_rows_dropped_by_watermark"])).toEqual([0, 1, 0, 0]);
    expect(batches.map((b) => b.state_operators["num_duplicates_dropped"])).toEqual([0, 1, 1, 0]);
    expect(batches.map((b) => b.event_time.watermark)).toEqual([
      "2026-01-01T12:20:00.000Z",
      "2026-01-01T12:50:00.000Z",
      "2026-01-01T12:50:00.000Z",
      "2026-01-01T12:50:00.000Z",
    ]);
    // State: {1, 2}, {2, 3}, {3}, {3, 2}.
    expect(batches.map((b) => b.state_operators["num_rows_total"])).toEqual([2, 2, 1, 2]);
  });

  it("refuses within_watermark without a watermark at create, saying what to add", async () => {
    const refused = await refusal(
      cp.client.createPipeline({
        name: "nowm",
        catalog: "stateful",
        schema: "nowm",
        definition: ingest(`${cp.landing}/nowm`, {
          drop_duplicates: { keys: ["id"], within_watermark: true },
        }),
      }),
    );
    expect(refused).toMatchObject({ status: 400, errorCode: "WATERMARK_REQUIRED" });
    expect((refused as Error).message).toContain("within_watermark needs a watermark: add watermark");
  });
});
