import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  SFNClient,
  StopExecutionCommand,
  type HistoryEvent,
} from "@aws-sdk/client-sfn";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionArnOf } from "../../../functions/runtime/sfn-update-executions.ts";
import { testAws } from "../../support/aws.ts";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * The update state machine, as synthesized, on LocalStack's Step Functions (`localstack-host`): its
 * task states are activities this process serves with the stack's task handlers
 * (infra/local/activity-step-functions.ts); the Retry and Catch lists, Maps and Choices are the ones
 * AWS runs. Each update is checked through the API and through the execution LocalStack ran: its
 * status and the states it entered. The embedded backend has no Step Functions of its own (its runner
 * is aws-local-stepfunctions, in process), so the file runs only where there is one.
 */

const aws = testAws();

describe.skipIf(aws.stepFunctionsEndpoint === undefined)("the update state machine on LocalStack", () => {
  let cp: TestControlPlane;
  let sfn: SFNClient;

  const execution = (updateId: string) => executionArnOf(cp.plane.stateMachineArn, updateId);
  /** The states the execution entered, in order, each once. */
  const entered = async (updateId: string) => {
    const events: HistoryEvent[] = [];
    let nextToken: string | undefined;
    do {
      const page = await sfn.send(
        new GetExecutionHistoryCommand({ executionArn: execution(updateId), nextToken, maxResults: 1000 }),
      );
      events.push(...(page.events ?? []));
      nextToken = page.nextToken;
    } while (nextToken);
    return [...new Set(events.flatMap((event) => event.stateEnteredEventDetails?.name ?? []))];
  };
  /** A landing folder of the pipeline's own (the control plane's is shared by the file's pipelines). */
  const folder = async (name: string) => {
    const dir = path.join(cp.landing, name);
    await mkdir(dir, { recursive: true });
    return {
      dir,
      land: (file: string, lines: readonly string[]) =>
        writeFile(path.join(dir, file), lines.join("\n") + "\n"),
    };
  };
  const described = (updateId: string) =>
    sfn.send(new DescribeExecutionCommand({ executionArn: execution(updateId) }));
  const update = async (pipelineId: string, body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const done = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    // The API answers from DynamoDB; the execution ends a moment after its last task wrote.
    while ((await described(update_id)).status === "RUNNING") await pause(100);
    return { updateId: update_id, done };
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    const { region, credentials } = aws.endpoints;
    sfn = new SFNClient({ endpoint: cp.plane.stepFunctionsEndpoint, region, credentials });
  });
  afterAll(async () => {
    await cp?.close();
    sfn?.destroy();
  });

  it("runs an update, and a rewind, through the synthesized states", async () => {
    const landing = await folder("run");
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      ...ingestPipeline({ name: "on localstack", catalog: "sfn", schema: "run", path: landing.dir }),
      configuration: { "pipelines.rewind.enabled": "true" },
    });
    expect(cp.plane.stateMachineArn).toMatch(/^arn:aws:states:us-east-1:000000000000:stateMachine:/);
    await landing.land("a.json", ['{"id": 1}', '{"id": 2}', '{"id": 3}']);
    const first = await update(pipelineId);
    expect(first.done.state, first.done.error?.message).toBe("COMPLETED");
    expect((await described(first.updateId)).status).toBe("SUCCEEDED");
    expect(await entered(first.updateId)).toEqual([
      "PlanUpdate",
      "Branch",
      "RunLevels",
      "RunLevel",
      "RunFlow",
      "FinishUpdate",
    ]);
    const point = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;

    await landing.land("b.json", ['{"id": 4}']);
    expect((await update(pipelineId)).done.state).toBe("COMPLETED");
    const count = async () =>
      (await cp.client.query("sfn.run.raw", { sql: "SELECT count(*) AS n FROM t" })).rows;
    expect(await count()).toEqual([{ n: 4 }]);

    const rewind = await update(pipelineId, { rewind_spec: { rewind_point_id: point } });
    expect(rewind.done.state, rewind.done.error?.message).toBe("COMPLETED");
    expect((await described(rewind.updateId)).status).toBe("SUCCEEDED");
    expect(await entered(rewind.updateId)).toEqual([
      "PlanUpdate",
      "Branch",
      "RewindWaves",
      "RewindWave",
      "RewindDataset",
      "FinishRewind",
      "FinishUpdate",
    ]);
    expect(await count()).toEqual([{ n: 3 }]);
  });

  it("takes a flow's failure down the Catch path: the update FAILED with its code, the execution FAILED", async () => {
    const landing = await folder("fail");
    const { pipeline_id: pipelineId } = await cp.client.createPipeline(
      ingestPipeline({ name: "failing on localstack", catalog: "sfn", schema: "fail", path: landing.dir }),
    );
    await landing.land("broken.json", ['{"id": 1}', "not json"]);
    const failed = await update(pipelineId);
    expect(failed.done.state).toBe("FAILED");
    expect(failed.done.error).toMatchObject({ error_code: "INVALID_PARAMETER_VALUE" });
    expect(failed.done.error?.message).toMatch(/broken\.json line 2/);
    expect(await described(failed.updateId)).toMatchObject({ status: "FAILED", error: "UpdateFailed" });
    expect(await entered(failed.updateId)).toEqual([
      "PlanUpdate",
      "Branch",
      "RunLevels",
      "RunLevel",
      "RunFlow",
      // The item processor's Catch records the failure; its Fail state fails the Maps, whose Catch
      // ends the execution through the top level's.
      "FailUpdateInRun",
      "FailUpdateInRunFailed",
      "FailUpdate",
      "FailUpdateFailed",
    ]);
  });

  /**
   * A difference from AWS, pinned: AWS reports a stopped execution ABORTED at once (the task in hand
   * runs on, unwatched); LocalStack 4.4 keeps it RUNNING until that task is answered, since a Task
   * state waiting on its activity does not watch for the stop, and then FAILED. Ebb's stale-update
   * check asks DescribeExecution, so on LocalStack an update whose execution was stopped counts as
   * running until then (lost-execution.test.ts waits for it to end).
   */
  it("keeps a stopped execution RUNNING until the task in hand is answered, then FAILED (AWS: ABORTED at once)", async () => {
    const landing = await folder("stop");
    const body = ingestPipeline({
      name: "stopped on localstack",
      catalog: "sfn",
      schema: "stop",
      path: landing.dir,
    });
    // One file a batch: RunFlow is in hand for twenty batches.
    const [raw] = body.definition.datasets;
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      ...body,
      definition: {
        datasets: [{ ...raw, flows: [{ ...raw!.flows[0]!, options: { max_files_per_batch: 1 } }] }],
      },
    });
    for (let i = 1; i <= 20; i++) await landing.land(`s${String(i).padStart(2, "0")}.json`, [`{"id": ${i}}`]);
    const { update_id } = await cp.client.startUpdate(pipelineId);
    while (!(await entered(update_id)).includes("RunFlow")) await pause(100);
    await sfn.send(new StopExecutionCommand({ executionArn: execution(update_id) }));
    expect((await described(update_id)).status).toBe("RUNNING");
    while ((await described(update_id)).status === "RUNNING") await pause(200);
    // Then it fails: its Map, finding the iteration stopped, raises an internal error (logged as
    // "Custom Error Names MUST NOT begin with the prefix 'States.'"); no Catch runs.
    expect(await described(update_id)).toMatchObject({ status: "FAILED", error: "States.Runtime" });
    expect(await entered(update_id)).not.toContain("FailUpdate");
  });
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
