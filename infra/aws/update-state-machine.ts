import { Duration, RemovalPolicy } from "aws-cdk-lib";
import type * as lambda from "aws-cdk-lib/aws-lambda";
import * as logs from "aws-cdk-lib/aws-logs";
import * as sfn from "aws-cdk-lib/aws-stepfunctions";
import * as tasks from "aws-cdk-lib/aws-stepfunctions-tasks";
import { Construct } from "constructs";
import type { EbbSparkEngine } from "./ebb-spark-engine.ts";
import {
  MAX_PARALLEL_ITEMS,
  TASK_TIMEOUT_SECONDS,
  UPDATE_FAILED,
  taskRetriers,
  type UpdateTask,
} from "../../shared/control/updates/update-tasks.ts";

/**
 * The state machine that runs one update (architecture.md "The shape"), in JSONPath with inline Maps
 * only (the local runner has neither JSONata nor Distributed Map):
 *
 *   PlanUpdate ─► Branch ─┬─ rewind ─► RewindWaves (Map, one wave at a time)
 *                         │              └─ RewindWave (Map over the wave's datasets) ─► RewindDataset
 *                         │            ─► FinishRewind ─► FinishUpdate
 *                         ├─ resets ─► ResetDatasets ─► AfterResets ─► RunLevels or CycleLevels
 *                         ├─ run ────► RunLevels (Map, one DAG level at a time)
 *                         │              └─ RunLevel (Map over the level's flows) ─► RunFlow,
 *                         │                 retried while its budget runs out (RunBudgetSpentError)
 *                         │            ─► FinishUpdate
 *                         ├─ continuous ─► CycleLevels (the same, RunFlowInCycle) ─► WaitForTrigger
 *                         │            ─► NextCycle ─► CycleLevels again, or ContinueUpdate (a new
 *                         │               execution) every N cycles
 *                         └─ done ───► FinishUpdate
 *
 * Transitions are what a Standard workflow is billed by, so a one-off run pays PlanUpdate, Branch,
 * RunLevels, FinishUpdate, one RunLevel per DAG level and one RunFlow per flow (a retry per extra
 * invocation): no Choice or Succeed per flow or per run.
 *
 * Every task has `TimeoutSeconds` (its Lambda's timeout), retries the errors named in `taskRetriers`, and catches everything else to FailUpdate
 * (the update FAILED with its error and an event), then the Fail state. A Map item's Catch keeps the
 * item's input (`ResultPath: $.error`), so FailUpdate knows the flow a task function's timeout
 * (`States.Timeout`, `Sandbox.Timedout`) or out-of-memory (`Runtime.OutOfMemory`) stopped: it fails
 * the update as FUNCTION_TIMEOUT / FUNCTION_OUT_OF_MEMORY naming it, and marks its unfinished batch
 * for re-planning (task-errors.ts, finish-step.ts). Payloads are ids only. The
 * task names, retries and parallelism come from `update-tasks.ts`, which the in-process driver walks
 * the same way.
 *
 * With a Spark engine (`spark`), RunFlow keeps its answer (`$.run`) and a Choice after it runs a batch
 * RunFlow handed to Spark (`$.run.sparkRequest`: the request it wrote to the bucket) with EMR
 * Serverless's own `startJobRun.sync` integration (no function waits on the job), then RunFlow again,
 * which commits that attempt's manifest (the job's run id at `$.run.sparkJob`) or, when the job failed
 * (caught at `$.run.sparkFailure`), fails the batch with SPARK_JOB_FAILED:
 *
 *   RunFlow ─► SparkBatchAsked ─┬─ request ─► RunSparkBatch ─► RunFlow (the loop)
 *                               └─ otherwise ─► FlowDone
 *
 * That costs a Choice and a Succeed per RunFlow invocation, paid only by deployments with Spark on.
 */

export interface UpdateTaskFunctions {
  readonly planUpdate: lambda.IFunction;
  readonly rewindDataset: lambda.IFunction;
  readonly finishRewind: lambda.IFunction;
  readonly resetDatasets: lambda.IFunction;
  readonly runFlow: lambda.IFunction;
  readonly finishUpdate: lambda.IFunction;
  readonly failUpdate: lambda.IFunction;
  readonly nextCycle: lambda.IFunction;
  readonly continueUpdate: lambda.IFunction;
}

export interface UpdateStateMachineProps {
  readonly functions: UpdateTaskFunctions;
  /** Each task's `TimeoutSeconds`: its function's timeout. @default TASK_TIMEOUT_SECONDS */
  readonly taskTimeoutSeconds?: number;
  /** @default 24 hours */
  readonly timeout?: Duration;
  /** How long the execution logs are kept. @default one month */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Which execution events are logged; never their input and output, which hold pipeline definitions.
   * @default every event (`ALL`): each state's start and end, so a stuck or slow update can be followed
   */
  readonly logLevel?: sfn.LogLevel;
  /** X-Ray tracing of every execution. @default true */
  readonly tracing?: boolean;
  /** The Spark engine whose batches the machine runs (ebb-spark-engine.ts). @default none */
  readonly spark?: EbbSparkEngine;
}

export class UpdateStateMachine extends Construct {
  readonly stateMachine: sfn.StateMachine;
  private readonly taskTimeoutSeconds: number;

  constructor(scope: Construct, id: string, props: UpdateStateMachineProps) {
    super(scope, id);
    this.taskTimeoutSeconds = props.taskTimeoutSeconds ?? TASK_TIMEOUT_SECONDS;
    const fns = props.functions;
    // Each graph (the top level, each Map's item processor) needs its own FailUpdate and Fail states.
    const failUpdate = (stateId: UpdateTask) => {
      const failed = new sfn.Fail(this, `${stateId}Failed`, {
        error: UPDATE_FAILED.Error,
        cause: UPDATE_FAILED.Cause,
      });
      return this.task(stateId, fns.failUpdate, sfn.JsonPath.DISCARD).addCatch(failed).next(failed);
    };
    const catching = (task: tasks.LambdaInvoke, handler: sfn.IChainable) =>
      task.addCatch(handler, { resultPath: "$.error" });

    const outerFail = failUpdate("FailUpdate");
    // The machine's last state: the execution succeeds when it does (no Succeed state to pay for).
    // FinishUpdate may hand the update over to a new execution of this machine (past the plan's
    // hand-over time), whose ARN it takes from the context object, as ContinueUpdate does.
    const finishUpdate = catching(
      this.task("FinishUpdate", fns.finishUpdate, sfn.JsonPath.DISCARD, {
        "pipelineId.$": "$.pipelineId",
        "updateId.$": "$.updateId",
        "plan.$": "$.plan",
        "stateMachineArn.$": "$$.StateMachine.Id",
      }),
      outerFail,
    );

    // Rewind: waves in DAG order, the datasets of a wave side by side.
    const rewindDataset = catching(
      this.task("RewindDataset", fns.rewindDataset, sfn.JsonPath.DISCARD),
      failUpdate("FailUpdateInRewind"),
    );
    const rewindWave = new sfn.Map(this, "RewindWave", {
      itemsPath: "$.items",
      maxConcurrency: MAX_PARALLEL_ITEMS,
      resultPath: sfn.JsonPath.DISCARD,
    }).itemProcessor(rewindDataset);
    const rewindWaves = new sfn.Map(this, "RewindWaves", {
      itemsPath: "$.plan.waves",
      maxConcurrency: 1,
      resultPath: sfn.JsonPath.DISCARD,
    })
      .itemProcessor(rewindWave)
      .addCatch(outerFail, { resultPath: "$.error" });
    const finishRewind = catching(
      this.task("FinishRewind", fns.finishRewind, sfn.JsonPath.DISCARD),
      outerFail,
    );
    const rewind = rewindWaves.next(finishRewind).next(finishUpdate);

    // Run: DAG levels in order, the flows of a level side by side, each retried while its budget runs
    // out. A continuous update walks a copy of the levels (its own state names) that loops through
    // the trigger, so a one-off run goes straight on to FinishUpdate without a Choice.
    const spark = props.spark;
    const levels = (names: { levels: string; level: string; task: UpdateTask; fail: UpdateTask }) => {
      const runFlow = catching(
        this.task(names.task, fns.runFlow, spark ? "$.run" : sfn.JsonPath.DISCARD),
        failUpdate(names.fail),
      );
      if (spark) {
        const suffix = names.task.slice("RunFlow".length);
        const job = spark.runBatchState(`RunSparkBatch${suffix}`, {
          requestUriPath: "$.run.sparkRequest.uri",
          namePath: "$.run.sparkRequest.name",
          resultPath: "$.run.sparkJob",
        });
        // A failed job (or one the service would not start) goes back to RunFlow, which names it.
        job.addCatch(runFlow, { errors: ["States.ALL"], resultPath: "$.run.sparkFailure" }).next(runFlow);
        runFlow.next(
          new sfn.Choice(this, `SparkBatchAsked${suffix}`)
            .when(sfn.Condition.isPresent("$.run.sparkRequest"), job)
            .otherwise(new sfn.Succeed(this, `FlowDone${suffix}`)),
        );
      }
      const runLevel = new sfn.Map(this, names.level, {
        itemsPath: "$.items",
        maxConcurrency: MAX_PARALLEL_ITEMS,
        resultPath: sfn.JsonPath.DISCARD,
      }).itemProcessor(runFlow);
      return new sfn.Map(this, names.levels, {
        itemsPath: "$.plan.levels",
        maxConcurrency: 1,
        resultPath: sfn.JsonPath.DISCARD,
      })
        .itemProcessor(runLevel)
        .addCatch(outerFail, { resultPath: "$.error" });
    };
    const runLevels = levels({
      levels: "RunLevels",
      level: "RunLevel",
      task: "RunFlow",
      fail: "FailUpdateInRun",
    });
    runLevels.next(finishUpdate);
    const cycleLevels = levels({
      levels: "CycleLevels",
      level: "CycleLevel",
      task: "RunFlowInCycle",
      fail: "FailUpdateInCycle",
    });
    // Continuous: wait for the trigger, count the cycle, run the levels again (or hand over).
    const continueUpdate = catching(
      this.task("ContinueUpdate", fns.continueUpdate, sfn.JsonPath.DISCARD, {
        "pipelineId.$": "$.pipelineId",
        "updateId.$": "$.updateId",
        "cycle.$": "$.cycle.number",
        "stateMachineArn.$": "$$.StateMachine.Id",
      }),
      outerFail,
    ).next(new sfn.Succeed(this, "HandedOver"));
    const nextCycle = catching(this.task("NextCycle", fns.nextCycle, "$.cycle"), outerFail).next(
      new sfn.Choice(this, "ContinueHere")
        .when(sfn.Condition.booleanEquals("$.cycle.stopped", true), new sfn.Succeed(this, "Stopped"))
        .when(sfn.Condition.booleanEquals("$.cycle.continueAsNew", true), continueUpdate)
        .otherwise(cycleLevels),
    );
    cycleLevels.next(
      new sfn.Wait(this, "WaitForTrigger", { time: sfn.WaitTime.secondsPath("$.plan.triggerSeconds") }).next(
        nextCycle,
      ),
    );
    const continuous = sfn.Condition.booleanEquals("$.plan.continuous", true);
    const resetDatasets = catching(
      this.task("ResetDatasets", fns.resetDatasets, sfn.JsonPath.DISCARD),
      outerFail,
    ).next(new sfn.Choice(this, "AfterResets").when(continuous, cycleLevels).otherwise(runLevels));
    const running = sfn.Condition.stringEquals("$.plan.branch", "run");

    const plan = catching(this.task("PlanUpdate", fns.planUpdate, "$.plan"), outerFail).next(
      new sfn.Choice(this, "Branch")
        .when(sfn.Condition.stringEquals("$.plan.branch", "rewind"), rewind)
        .when(sfn.Condition.and(running, sfn.Condition.booleanEquals("$.plan.resets", true)), resetDatasets)
        .when(sfn.Condition.and(running, continuous), cycleLevels)
        .when(running, runLevels)
        .otherwise(finishUpdate),
    );

    this.stateMachine = new sfn.StateMachine(this, "StateMachine", {
      definitionBody: sfn.DefinitionBody.fromChainable(plan),
      queryLanguage: sfn.QueryLanguage.JSON_PATH,
      timeout: props.timeout ?? Duration.hours(24),
      // Every event is logged, without its data (it holds definitions); every execution is traced
      // with X-Ray unless tracing is turned off.
      logs: {
        destination: new logs.LogGroup(this, "ExecutionLogs", {
          retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
        level: props.logLevel ?? sfn.LogLevel.ALL,
        includeExecutionData: false,
      },
      tracingEnabled: props.tracing ?? true,
    });
    spark?.grantRunBatches(this.stateMachine);
  }

  /** A Lambda task whose state is the function's own answer; retried on transient errors. */
  private task(
    id: UpdateTask,
    fn: lambda.IFunction,
    resultPath: string,
    payload?: Record<string, unknown>,
  ): tasks.LambdaInvoke {
    const task = new tasks.LambdaInvoke(this, id, {
      lambdaFunction: fn,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
      taskTimeout: sfn.Timeout.duration(Duration.seconds(this.taskTimeoutSeconds)),
      resultPath,
      ...(payload ? { payload: sfn.TaskInput.fromObject(payload) } : {}),
    });
    for (const retrier of taskRetriers(id)) {
      task.addRetry({
        errors: [...retrier.errors],
        interval: Duration.seconds(retrier.intervalSeconds),
        maxAttempts: retrier.maxAttempts,
        backoffRate: retrier.backoffRate,
      });
    }
    return task;
  }
}
