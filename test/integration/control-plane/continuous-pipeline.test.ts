import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { CYCLES_PER_EXECUTION_VARIABLE } from "../../../shared/control/updates/steps/continuous-step.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/** A continuous pipeline through the API: its update keeps running and processing until stopped. */
describe("a continuous pipeline", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  const count = async () =>
    (
      await cp.client
        .query("cont.demo.raw", { sql: "SELECT count(*) AS n FROM t" })
        .catch(() => ({ rows: [{ n: 0 }] }))
    ).rows[0]!["n"];
  const eventually = async (check: () => Promise<boolean>, what: string) => {
    const deadline = Date.now() + 240_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "continuous",
      catalog: "cont",
      schema: "demo",
      continuous: true,
      configuration: {
        "pipelines.rewind.enabled": "true",
        "pipelines.trigger.interval": "interval 1 second",
      },
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT * FROM source",
              },
            ],
          },
        ],
      },
    }));
  });
  afterAll(() => cp?.close());

  it("keeps processing new data, refuses a rewind while running, and stops on request", async () => {
    await cp.land("1.json", [{ id: 1 }]);
    const { update_id } = await cp.client.startUpdate(pipelineId);
    await eventually(async () => (await count()) === 1, "the first file");
    await cp.land("2.json", [{ id: 2 }, { id: 3 }]);
    await eventually(async () => (await count()) === 3, "the second file, in a later cycle");
    expect((await cp.client.getUpdate(pipelineId, update_id)).update).toMatchObject({
      state: "RUNNING",
      mode: "CONTINUOUS",
    });

    const busy = await cp.client
      .startUpdate(pipelineId, {
        rewind_spec: { rewind_timestamp: new Date(Date.now() - 1000).toISOString().replace(/\.\d+Z$/, "Z") },
      })
      .catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(EbbApiError);
    expect(busy).toMatchObject({ status: 409, errorCode: "PIPELINE_BUSY" });

    await cp.client.stopPipeline(pipelineId);
    expect((await cp.client.getUpdate(pipelineId, update_id)).update.state).toBe("CANCELED");
    expect((await cp.client.getPipeline(pipelineId))["state"]).toBe("IDLE");
  });

  it("hands a full refresh over to a new execution without resetting its tables again", async () => {
    // Two cycles per execution: the update continues as new executions every two cycles.
    process.env[CYCLES_PER_EXECUTION_VARIABLE] = "2";
    try {
      const landing = path.join(cp.landing, "refresh");
      await mkdir(landing, { recursive: true });
      await writeFile(path.join(landing, "1.json"), '{"id": 1}\n');
      const { pipeline_id } = await cp.client.createPipeline({
        name: "continuous-refresh",
        catalog: "cont",
        schema: "refresh",
        continuous: true,
        configuration: { "pipelines.trigger.interval": "interval 1 second" },
        definition: {
          datasets: [
            {
              type: "streaming_table",
              name: "raw",
              flows: [
                {
                  name: "ingest",
                  source: { type: "auto_loader", path: landing, format: "json", schema: { id: "BIGINT" } },
                  sql: "SELECT * FROM source",
                },
              ],
            },
          ],
        },
      });
      const { update_id } = await cp.client.startUpdate(pipeline_id, { full_refresh: true });
      const rows = async () =>
        (
          await cp.client
            .query("cont.refresh.raw", { sql: "SELECT count(*) AS n FROM t" })
            .catch(() => ({ rows: [{ n: 0 }] }))
        ).rows[0]!["n"];
      await eventually(async () => (await rows()) === 1, "the first file");
      // Past several hand-overs (a cycle is about a second), then new data.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      await writeFile(path.join(landing, "2.json"), '{"id": 2}\n');
      await eventually(async () => (await rows()) === 2, "the second file, in a later execution");
      await cp.client.stopPipeline(pipeline_id);

      const events = await cp.client.events(pipeline_id, {
        filter: `origin.update_id = '${update_id}' AND event_type = 'update_progress'`,
        max_results: 250,
      });
      const states = events.events.map(
        (e) => (e.details as { update_progress: { state: string } }).update_progress.state,
      );
      // The refresh's reset ran once, in the first execution: the table still holds its first batch.
      expect(states.filter((state) => state === "RESETTING")).toHaveLength(1);
      const { history } = await cp.client.history("cont.refresh.raw");
      expect(history.filter((entry) => entry["operation"] === "STREAMING UPDATE")).toHaveLength(2);
    } finally {
      delete process.env[CYCLES_PER_EXECUTION_VARIABLE];
    }
  });
});
