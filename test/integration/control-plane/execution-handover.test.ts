import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HANDOVER_AFTER_VARIABLE } from "../../../shared/control/updates/steps/execution-handover.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * An update longer than one execution may run (Step Functions' 24 hours, shortened here to 1 s):
 * it continues in new executions where its flows stand, and completes with every row once. Each
 * batch commits through DynamoDB and S3 (well over 40 ms), so 24 one-file batches outlast 1 s.
 */
describe("an update that outlives its execution", () => {
  let cp: TestControlPlane;
  const FILES = 24;

  beforeAll(async () => {
    process.env[HANDOVER_AFTER_VARIABLE] = "1";
    cp = await startTestControlPlane();
  });
  afterAll(async () => {
    delete process.env[HANDOVER_AFTER_VARIABLE];
    await cp?.close();
  });

  it("continues in new executions and completes with every row exactly once", async () => {
    for (let i = 0; i < FILES; i++) await cp.land(`${i}.json`, [{ id: 2 * i }, { id: 2 * i + 1 }]);
    const { pipeline_id } = await cp.client.createPipeline({
      name: "handover",
      catalog: "main",
      schema: "handover",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            flows: [
              {
                name: "ingest",
                // One file per batch: the backlog takes several batches, longer than one execution.
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                options: { max_files_per_batch: 1 },
                sql: "SELECT id FROM source",
              },
            ],
          },
        ],
      },
    });
    const { update_id } = await cp.client.startUpdate(pipeline_id);
    const update = await cp.client.waitForUpdate(pipeline_id, update_id, { timeoutMs: 240_000 });
    expect(update.state).toBe("COMPLETED");

    const { rows } = await cp.client.query("main.handover.raw", {
      sql: "SELECT count(*) AS n, count(DISTINCT id) AS ids FROM t",
    });
    expect(rows[0]).toEqual({ n: 2 * FILES, ids: 2 * FILES });
    const { events } = await cp.client.events(pipeline_id, {
      filter: `origin.update_id = '${update_id}' AND event_type = 'update_progress'`,
      max_results: 250,
    });
    const handovers = events.filter((e) => /continues in a new execution/.test(e.message));
    expect(handovers.length).toBeGreaterThan(0);
    expect(
      events.map((e) => (e.details as { update_progress: { state: string } }).update_progress.state),
    ).toContain("COMPLETED");
  });
});
