import { DuckSession } from "../../../duck/duck-session.ts";
import { ScratchFolder } from "../../../duck/scratch-folder.ts";
import { DatasetCatalog } from "../../../engine/dataset-catalog.ts";
import { UpdateCanceledError } from "../../../engine/errors.ts";
import type { CrashHook } from "../../../engine/crash-points.ts";
import { runFlowUntilCaughtUp, type FlowRunProgress } from "../../../engine/flow-runner.ts";
import { refreshMaterializedView, type ViewRefresh } from "../../../engine/materialized-view.ts";
import { updateFence } from "../../../engine/update-fence.ts";
import {
  SparkBatchHandedOff,
  StateMachineSparkJobs,
  type EndedSparkJob,
  type SparkRequestRef,
} from "../../../engine/spark/state-machine-spark-jobs.ts";
import { isTerminal } from "../../../store/updates-repository.ts";
import { loadPipeline, type ControlPlane } from "../../plane/control-plane.ts";
import { recorder } from "../update-events.ts";
import { describeTaskRetry, retriedByTask } from "../update-tasks.ts";
import type { RunItem } from "./plan-step.ts";
import { RunBudgetSpentError } from "./task-errors.ts";
import { openUpdate, type UpdateContext } from "./update-context.ts";

/**
 * One item of a DAG level (architecture.md "The shape": RunFlow loops until caught up):
 *
 * - a streaming flow runs micro-batches until it has caught up or its time budget is spent; a spent
 *   budget throws `RunBudgetSpentError`, which the state machine retries, so a flow with a long
 *   backlog spans several invocations, each batch exactly once (the micro-batch protocol resumes
 *   where it stopped); at the execution's hand-over time it records the hand-over instead and ends
 *   (execution-handover.ts);
 * - a materialized view refreshes (one overwrite commit), incrementally or by a full recompute.
 * Between batches the step looks at the update: a stopped one (CANCELED) ends the loop.
 *
 * On AWS a batch on Spark is handed to the state machine (state-machine-spark-jobs.ts): the step
 * answers `sparkRequest`, the machine runs the job and invokes the step again with the item and how
 * the job ended (`run`), and the flow resumes at that batch, committing its manifest.
 */

/** A RunFlow invocation's input: the item, and (after a Spark job the machine ran) how that job ended. */
export type RunInput = RunItem & { readonly run?: Partial<EndedSparkJob> };

/** This invocation's share of the flow's work (or the view's refresh). */
export interface RunOutcome extends FlowRunProgress {
  readonly view?: ViewRefresh;
  /** A batch for the state machine to run on Spark: the request RunFlow wrote. */
  readonly sparkRequest?: SparkRequestRef;
}

const NOTHING = { batches: 0, rowsIn: 0, rowsOut: 0, badRecords: 0 } as const;

/** `crash` is the crash-injection test hook, handed to every micro-batch. */
export async function runItem(
  plane: ControlPlane,
  item: RunInput,
  budgetMs: number,
  hooks: { readonly crash?: CrashHook } = {},
): Promise<RunOutcome> {
  const context = await openItem(plane, item);
  if (!context) return NOTHING;
  const catalog = new DatasetCatalog(context.pipeline, plane.bucket);
  const dataset = catalog.dataset(item.dataset);
  const duck = DuckSession.deferred();
  // Made when first written to: a task whose batches run in a sandbox may never write to it.
  const scratch = ScratchFolder.deferred("ebb-task-");
  const stopped = watchForStop(plane, item);
  const session = { duck, scratch, clock: plane.clock, signal: stopped.signal };
  const isActive = async () => (await plane.pipelines.get(item.pipelineId))?.activeUpdateId === item.updateId;
  try {
    if (dataset.type === "materialized_view") {
      const fence = updateFence(item.updateId, isActive, stopped.signal);
      let refreshed: ViewRefresh;
      try {
        refreshed = await refreshMaterializedView(dataset, catalog, session, fence, item.pipelineId, {
          ...(plane.spark ? { spark: sparkFor(plane, item) } : {}),
          ...(item.engine ? { engine: item.engine } : {}),
        });
      } catch (error) {
        // A recompute on Spark on AWS: the state machine runs the job, then this step again.
        if (error instanceof SparkBatchHandedOff) return { ...NOTHING, sparkRequest: error.request };
        throw error;
      }
      // Inputs unchanged, nothing recomputed: no event (an idle update writes as little as it can).
      if (refreshed.refresh)
        await context.events.viewRefresh(dataset.name, { ...refreshed, refresh: refreshed.refresh });
      await context.events.flush();
      return { ...NOTHING, batches: 1, rowsOut: refreshed.rows, view: refreshed };
    }
    const flow =
      dataset.type === "streaming_table" ? dataset.flows.find((f) => f.name === item.flow) : undefined;
    if (dataset.type !== "streaming_table" || !flow) {
      throw new TypeError(
        `${item.dataset}${item.flow ? `.${item.flow}` : ""} is not a flow or materialized view`,
      );
    }
    // The budget ends at the execution's hand-over time, if that comes first (execution-handover.ts),
    // but never before one batch: each execution moves every flow on, however late it reached it.
    const budgetEnd = plane.clock() + budgetMs;
    const deadline = Math.min(budgetEnd, item.handOverAt ?? Infinity);
    let outOfTime = false;
    // Before the first batch the update is as just read or planned: RUNNING, no read.
    let first = true;
    const shouldStop = async () => {
      const limit = first ? budgetEnd : deadline;
      if (plane.clock() >= limit) return (outOfTime = true);
      if (first) return (first = false);
      const update = await plane.updates.get(item.pipelineId, item.updateId);
      return update === undefined || isTerminal(update.state);
    };
    try {
      const progress = await runFlowUntilCaughtUp(
        {
          pipelineId: item.pipelineId,
          updateId: item.updateId,
          dataset,
          flow,
          catalog,
          checkpoints: plane.checkpoints,
          session,
          locate: plane.locate,
          eventStreams: plane.eventStreams,
          isActive,
          ...(plane.spark ? { spark: sparkFor(plane, item) } : {}),
          ...(item.engine ? { engine: item.engine } : {}),
          ...(hooks.crash ? { crash: hooks.crash } : {}),
        },
        context.events,
        shouldStop,
      );
      await context.events.flowStatus(dataset.name, flow.name, "COMPLETED", { metrics: progress });
      await context.events.flush();
      return progress;
    } catch (error) {
      // Not a failure: the state machine runs the job, then this step again (events so far kept).
      if (error instanceof SparkBatchHandedOff) {
        await context.events.flush();
        return { ...NOTHING, sparkRequest: error.request };
      }
      // A transient failure the task's Retry runs again is a warning; any other fails the update.
      if (retriedByTask(error))
        await context.events.flowRetried(dataset.name, flow.name, error, describeTaskRetry());
      else if (!(error instanceof UpdateCanceledError))
        await context.events.flowStatus(dataset.name, flow.name, "FAILED", {}, error);
      // The failure is the step's answer: its events are written as well as they can be.
      await context.events.flush().catch(() => undefined);
      if (error instanceof UpdateCanceledError && outOfTime) {
        if (item.handOverAt === undefined || plane.clock() < item.handOverAt)
          throw new RunBudgetSpentError(dataset.name, flow.name);
        // The execution's time is up: the next execution runs the batches left.
        await plane.updates.requestHandover(item.pipelineId, item.updateId, item.handOverAt);
        return NOTHING;
      }
      throw error;
    }
  } finally {
    stopped.close();
    duck.close();
    await scratch.dispose();
  }
}

/** The plane's Spark engine, holding the job the state machine ran for this item, if it ran one. */
function sparkFor(plane: ControlPlane, item: RunInput) {
  const ended = item.run?.sparkRequest ? (item.run as EndedSparkJob) : undefined;
  return plane.spark instanceof StateMachineSparkJobs ? plane.spark.resuming(ended) : plane.spark;
}

/**
 * The item's update context, or `undefined` when the update has ended. An item the plan marked RUNNING
 * (`definitionVersion` set) is opened without reading the update; any other reads it and moves it to
 * RUNNING (the first item after the resets).
 */
async function openItem(plane: ControlPlane, item: RunItem): Promise<ItemContext | undefined> {
  if (item.definitionVersion !== undefined) {
    const { pipeline } = await loadPipeline(plane, item.pipelineId, item.definitionVersion);
    return { pipeline, events: recorder(plane, item, pipeline.definition.name) };
  }
  const context = await openUpdate(plane, item);
  if (isTerminal(context.update.state)) return undefined;
  if (context.update.state !== "RUNNING") {
    await plane.updates.transition(item.pipelineId, item.updateId, "RUNNING");
    await context.events.updateProgress("RUNNING");
  }
  return context;
}

type ItemContext = Pick<UpdateContext, "pipeline" | "events">;

/** How often a running item looks whether its update was stopped. */
const STOP_POLL_MS = 2_000;

/**
 * An abort signal that fires once the update is stopped (CANCELED or otherwise terminal), so a long
 * statement is interrupted rather than running on after `stop`; the item then fails as canceled.
 */
function watchForStop(plane: ControlPlane, item: RunItem): { signal: AbortSignal; close: () => void } {
  const controller = new AbortController();
  const timer = setInterval(() => {
    plane.updates.get(item.pipelineId, item.updateId).then(
      (update) => {
        if (update === undefined || isTerminal(update.state)) controller.abort();
      },
      () => undefined,
    );
  }, STOP_POLL_MS);
  timer.unref();
  return { signal: controller.signal, close: () => clearInterval(timer) };
}
