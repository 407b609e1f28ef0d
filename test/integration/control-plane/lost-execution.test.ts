import { DescribeExecutionCommand, SFNClient, StopExecutionCommand } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionArnOf } from "../../../functions/runtime/sfn-update-executions.ts";
import { testAws } from "../../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * An update whose execution is gone (stopped or timed out outside Ebb, or lost with a crashed
 * runtime) never wedges its pipeline: the next start-update finds the execution not running, fails
 * the stale update with EXECUTION_LOST and starts; the new update continues from the committed
 * batches, so every input row lands exactly once.
 */

const FILES = 20;

describe("an update whose execution is gone", () => {
  let cp: TestControlPlane;
  let pipelineId: string;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "lost execution",
      catalog: "lost",
      schema: "exec",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "events",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT id FROM source",
                options: { max_files_per_batch: 1 },
              },
            ],
          },
        ],
      },
    }));
    for (let i = 1; i <= FILES; i++) await cp.land(`f${String(i).padStart(3, "0")}.json`, [{ id: i }]);
  });
  afterAll(() => cp?.close());

  it("is failed by the next start, which is accepted and lands every row exactly once", async () => {
    const { update_id: lost } = await cp.client.startUpdate(pipelineId);
    // Let a few batches commit, then lose the execution behind Ebb's back.
    for (;;) {
      const { update } = await cp.client.getUpdate(pipelineId, lost);
      const batches = Object.values(update.progress ?? {}).reduce((n, flow) => n + flow.batches, 0);
      if (batches >= 3 || update.state === "COMPLETED") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const executionArn = executionArnOf(cp.plane.stateMachineArn, lost);
    const sfn = stepFunctions(cp);
    await sfn.send(new StopExecutionCommand({ executionArn }));
    // AWS (and the in-process runner) report it ABORTED at once; LocalStack only once the task in
    // hand is answered (localstack-state-machine.test.ts pins that).
    while ((await sfn.send(new DescribeExecutionCommand({ executionArn }))).status === "RUNNING") {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    sfn.destroy();
    expect((await cp.client.getUpdate(pipelineId, lost)).update.state).not.toMatch(
      /COMPLETED|FAILED|CANCELED/,
    );

    const started = Date.now();
    const { update_id: next } = await cp.client.startUpdate(pipelineId);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await cp.client.getUpdate(pipelineId, lost)).update).toMatchObject({
      state: "FAILED",
      error: { error_code: "EXECUTION_LOST" },
    });
    const done = await cp.client.waitForUpdate(pipelineId, next, { intervalMs: 200 });
    expect(done.state, done.error?.message).toBe("COMPLETED");
    const { rows } = await cp.client.query("lost.exec.events", {
      sql: "SELECT count(*) AS n, count(DISTINCT id) AS ids, min(id) AS lo, max(id) AS hi FROM t",
    });
    expect(rows).toEqual([{ n: FILES, ids: FILES, lo: 1, hi: FILES }]);
  });
});

/** The plane's Step Functions, as an operator outside Ebb would reach it. */
function stepFunctions(cp: TestControlPlane): SFNClient {
  const { region, credentials } = testAws().endpoints;
  return new SFNClient({ endpoint: cp.plane.stepFunctionsEndpoint, region, credentials });
}
