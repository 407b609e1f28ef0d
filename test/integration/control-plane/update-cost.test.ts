import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RequestCounter, requestsOf } from "../../../infra/local/request-counter.ts";
import type { LocalControlPlane } from "../../../infra/local/local-control-plane.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * What an update costs on AWS, counted on the local runtime as the cost benchmark counts it: the SDK
 * requests of the update's tasks, and the state machine's transitions and Lambda invocations (what
 * Step Functions and Lambda bill). Pipeline: `raw` (auto_loader) → `clean` (stream) and `total` (a
 * materialized view over raw): two DAG levels, three datasets.
 */

const DATASETS = 3;

describe("the cost of an update", () => {
  let cp: TestControlPlane<LocalControlPlane>;
  let pipelineId: string;
  const counter = RequestCounter.install();

  /** One update through the API, counted from start to the execution's end (no polling counted). */
  const countedUpdate = async () => {
    const before = cp.plane.stepFunctions.usage;
    counter.take();
    const { update_id } = await cp.client.startUpdate(pipelineId);
    await cp.plane.stepFunctions.settled();
    const requests = counter.take();
    const after = cp.plane.stepFunctions.usage;
    const { update } = await cp.client.getUpdate(pipelineId, update_id);
    expect(update.state).toBe("COMPLETED");
    return {
      requests,
      transitions: after.transitions - before.transitions,
      lambdaInvocations: after.lambdaInvocations - before.lambdaInvocations,
    };
  };

  beforeAll(async () => {
    // The in-process runner on every backend: it counts what Step Functions bills, and a poll for
    // activity tasks would count as the update's requests.
    cp = await startTestControlPlane({ inProcessStepFunctions: true });
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "cost",
      catalog: "cost",
      schema: "idle",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT id FROM source",
              },
            ],
          },
          {
            type: "streaming_table",
            name: "clean",
            flows: [
              { name: "copy", source: { type: "stream", dataset: "raw" }, sql: "SELECT id FROM source" },
            ],
          },
          { type: "materialized_view", name: "total", sql: "SELECT count(*) AS n FROM raw" },
        ],
      },
    }));
    await cp.land("1.json", [{ id: 1 }]);
    await countedUpdate();
  });
  afterAll(() => cp?.close());

  it("counts the state machine's transitions and its tasks' Lambda invocations", async () => {
    await cp.land("2.json", [{ id: 2 }]);
    const update = await countedUpdate();
    // PlanUpdate, Branch, RunLevels, a RunLevel per DAG level, a RunFlow per item, FinishUpdate:
    // within 3 + 2 per dataset.
    expect(update.transitions).toBe(4 + 2 + DATASETS);
    expect(update.transitions).toBeLessThanOrEqual(3 + 2 * DATASETS);
    // PlanUpdate, a RunFlow per item, FinishUpdate.
    expect(update.lambdaInvocations).toBe(DATASETS + 2);
    expect(requestsOf(update.requests, "S3")).toBeGreaterThan(0);
  });

  it("keeps an update with nothing new within its request budget", async () => {
    const idle = await countedUpdate();
    expect(idle.transitions).toBe(4 + 2 + DATASETS);
    // At most 2 S3 and 4 DynamoDB requests per dataset: one LIST per table, one GET for the view's
    // input; DynamoDB is held at today's figure (11), under its target. Events go out in batches,
    // not a PutItem each.
    expect(requestsOf(idle.requests, "S3")).toBeLessThanOrEqual(2 * DATASETS);
    expect(requestsOf(idle.requests, "DynamoDB")).toBeLessThanOrEqual(11);
    expect(requestsOf(idle.requests, "DynamoDB")).toBeLessThanOrEqual(4 * DATASETS);
    // A flow resumes from its HEAD item alone when nothing was planned above HEAD: no Query.
    expect(idle.requests.get("DynamoDBDocument QueryCommand") ?? 0).toBe(0);
    // The update's record names its execution as it is written: no UpdateItem after StartExecution.
    expect(idle.requests.get("DynamoDBDocument UpdateCommand")).toBe(1);
    // PlanUpdate and FinishUpdate each write their state changes and events in one transaction.
    expect(idle.requests.get("DynamoDBDocument TransactWriteCommand")).toBe(2);
    expect(idle.requests.get("DynamoDBDocument PutCommand") ?? 0).toBeLessThanOrEqual(1);
  });
});
