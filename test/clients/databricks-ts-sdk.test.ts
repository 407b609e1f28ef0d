import { WorkspaceClient } from "@databricks/sdk-experimental";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createIngestPipelines,
  startTestControlPlane,
  type TestControlPlane,
} from "../support/control-plane.ts";
import {
  ROOT_TABLE,
  runSeedScenario,
  seedPipelineWithBadBatch,
  type SeedClient,
  type SeedPipeline,
} from "../support/seed-scenario.ts";

/**
 * The Databricks TypeScript SDK (@databricks/sdk-experimental) against the local runtime, configured
 * only by host and token. Its typed `StartUpdate` has no `rewind_spec`, so a rewind goes through its
 * authenticated REST client (`apiClient.request`), as the seed does with the Python SDK's.
 */

const TERMINAL = ["COMPLETED", "FAILED", "CANCELED"];

describe("the Databricks TypeScript SDK", () => {
  let cp: TestControlPlane;
  let w: WorkspaceClient;
  let seed: SeedPipeline;

  const startRewind = async (pipelineId: string, spec: Record<string, unknown>) => {
    const response = (await w.apiClient.request({
      path: `/api/2.0/pipelines/${pipelineId}/updates`,
      method: "POST",
      headers: new Headers({ Accept: "application/json", "Content-Type": "application/json" }),
      raw: false,
      payload: {
        cause: "USER_ACTION",
        rewind_spec: {
          ...spec,
          datasets: [{ identifier: ROOT_TABLE, cascade: true, reset_checkpoints: true }],
        },
      },
    })) as { update_id: string };
    return response.update_id;
  };

  const client: SeedClient = {
    rewindPoints: async (pipelineId) => {
      const points: { id: string; timestamp: string }[] = [];
      const events = w.pipelines.listPipelineEvents({
        pipeline_id: pipelineId,
        filter: "event_type = 'rewind_summary' AND details.rewind_summary.dry_run = true",
        order_by: ["timestamp desc"],
      });
      for await (const event of events) points.push({ id: event.id!, timestamp: event.timestamp! });
      return points;
    },
    rewindToPoint: (pipelineId, pointId, dryRun) =>
      startRewind(pipelineId, { rewind_point_id: pointId, dry_run: dryRun }),
    rewindToTimestamp: (pipelineId, timestamp, dryRun) =>
      startRewind(pipelineId, { rewind_timestamp: timestamp, dry_run: dryRun }),
    replay: async (pipelineId) => (await w.pipelines.startUpdate({ pipeline_id: pipelineId })).update_id!,
    waitForUpdate: async (pipelineId, updateId) => {
      for (;;) {
        const { update } = await w.pipelines.getUpdate({ pipeline_id: pipelineId, update_id: updateId });
        if (TERMINAL.includes(update!.state!)) return update!.state!;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    w = new WorkspaceClient({ host: cp.plane.endpoint, token: cp.plane.token, authType: "pat" });
    seed = await seedPipelineWithBadBatch(cp);
  });
  // The seed's tables are claimed by one pipeline at a time: purge them (claims and data) for the next file.
  afterAll(async () => {
    if (seed) await cp.client.deletePipeline(seed.pipelineId, true);
    await cp?.close();
  });

  it("runs the seed's scenario: find a point, dry run, rewind by point and by timestamp, replay", async () => {
    await runSeedScenario(cp, client, seed);
  });

  it("reads get, listPipelines, listUpdates and the event log page by page", async () => {
    const pipeline = await w.pipelines.get({ pipeline_id: seed.pipelineId });
    expect(pipeline).toMatchObject({
      pipeline_id: seed.pipelineId,
      state: "IDLE",
      spec: { catalog: "catalog", schema: "schema", continuous: false },
      latest_updates: expect.arrayContaining([expect.objectContaining({ state: "COMPLETED" })]),
    });
    const listed = [];
    for await (const status of w.pipelines.listPipelines({})) listed.push(status);
    expect(listed.find((p) => p.pipeline_id === seed.pipelineId)).toMatchObject({
      state: "IDLE",
      latest_updates: expect.arrayContaining([expect.objectContaining({ state: "COMPLETED" })]),
    });
    const { updates } = await w.pipelines.listUpdates({ pipeline_id: seed.pipelineId, max_results: 2 });
    expect(updates![0]).toMatchObject({ pipeline_id: seed.pipelineId, state: "COMPLETED", mode: "DEFAULT" });
    // Pages of two, followed by the SDK through next_page_token: every event once.
    const paged = [];
    for await (const event of w.pipelines.listPipelineEvents({
      pipeline_id: seed.pipelineId,
      max_results: 2,
    }))
      paged.push(event.id);
    const all = (await cp.client.events(seed.pipelineId, { max_results: 1000 })).events.map((e) => e.id);
    expect(paged).toEqual(all);
    expect(all.length).toBeGreaterThan(2);
  });

  it("pages the rewind-point lookup and listPipelines past three pages", async () => {
    const pageSize = 2;
    const others = await createIngestPipelines(cp, 2 * pageSize, "ts_sdk");
    try {
      for (let i = 0; i < 2 * pageSize; i++) await cp.client.captureRewindPoint(seed.pipelineId);
      const filter = "event_type = 'rewind_summary'";
      const summaries = [];
      for await (const event of w.pipelines.listPipelineEvents({
        pipeline_id: seed.pipelineId,
        filter,
        max_results: pageSize,
      }))
        summaries.push(event.id);
      const all = (await cp.client.events(seed.pipelineId, { filter, max_results: 1000 })).events;
      expect(all.length).toBeGreaterThan(2 * pageSize);
      expect(summaries).toEqual(all.map((e) => e.id));
      const listed = [];
      for await (const status of w.pipelines.listPipelines({ max_results: pageSize }))
        listed.push(status.pipeline_id);
      const everyPipeline = (await cp.client.listPipelines()).statuses.map((p) => p.pipeline_id);
      expect(everyPipeline.length).toBeGreaterThan(2 * pageSize);
      expect(listed).toEqual(everyPipeline);
    } finally {
      for (const other of others) await cp.client.deletePipeline(other, true);
    }
  });

  it("stops the pipeline (a no-op when idle) and waits until it is IDLE", async () => {
    const waiter = await w.pipelines.stop({ pipeline_id: seed.pipelineId });
    expect(await waiter.wait()).toMatchObject({ pipeline_id: seed.pipelineId, state: "IDLE" });
  });
});
