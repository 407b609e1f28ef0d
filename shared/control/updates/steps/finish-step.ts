import { continueInNewExecution, handoverExecutionName } from "./execution-handover.ts";
import { captureRewindPoint } from "../../../rewind/rewind-points.ts";
import { isTerminal, type UpdateRecord } from "../../../store/updates-repository.ts";
import { rewindIncompleteMetrics } from "../../metrics/update-metrics.ts";
import { intentOf } from "../update-intent.ts";
import { UpdateNotFoundError } from "../../../store/errors.ts";
import { loadPipeline, rewindEnvironment, type ControlPlane } from "../../plane/control-plane.ts";
import { recorder } from "../update-events.ts";
import { finishFactsOf, type FinishFacts } from "../finish-facts.ts";
import { continueOrderedRun, orderedRunEnded } from "./ordered-run-handover.ts";
import { transitionTogether } from "./step-writes.ts";
import { describeSize } from "../../../engine/batch-size.ts";
import { markUnfinishedBatchOversized } from "../../../engine/micro-batch.ts";
import { describeCaught, FUNCTION_LIMIT_CODES, functionLimitOf, type CaughtError } from "./task-errors.ts";
import { openUpdate, type UpdateIds } from "./update-context.ts";
import { publishOnce } from "../../plane/lifecycle-events.ts";
import { updateCompleted, updateFailed } from "../lifecycle-event-builders.ts";

/**
 * The end of an execution. Success: the update COMPLETED, the pipeline released, and (rewind on) a
 * rewind point captured — the cheap, metadata-only capture semantics.md asks for after every
 * successful run (not after a rewind, a dry run or a validation). Failure (the Catch path): the update FAILED with its error and an event, the
 * pipeline released as FAILED; a rewind that failed part-way leaves its block in place.
 * Both are idempotent: a terminal update stays as it is. Each publishes its lifecycle event
 * ("Update Completed", "Update Failed") once, retried or not (docs/events.md).
 */

export async function finishUpdate(
  plane: ControlPlane,
  ids: UpdateIds,
  planned?: FinishFacts,
  handOver?: { readonly at: number; readonly stateMachineArn?: string },
): Promise<{ state: string }> {
  // Past the hand-over time a flow may have stopped with batches left: then the update goes on in
  // a new execution instead of finishing (execution-handover.ts). Before it, none did: no read.
  if (handOver !== undefined && plane.clock() >= handOver.at) {
    const update = await plane.updates.get(ids.pipelineId, ids.updateId);
    if (update?.state === "RUNNING" && update.handoverAt === handOver.at) {
      const name = handoverExecutionName(ids.updateId, handOver.at);
      const next = {
        name,
        ...(handOver.stateMachineArn ? { stateMachineArn: handOver.stateMachineArn } : {}),
      };
      await continueInNewExecution(plane, ids, next, "its execution's time is up, with batches left");
      return { state: "RUNNING" };
    }
  }
  const { facts, ended } = planned ? { facts: planned, ended: false } : await factsOf(plane, ids);
  const tablesWrittenBy = facts.wroteEveryTable ? facts.definitionVersion : undefined;
  // Everything is written before the update shows COMPLETED, so a client that sees COMPLETED finds
  // the pipeline free and the point listed.
  if (!ended) {
    const { pipeline } = await loadPipeline(plane, ids.pipelineId, facts.definitionVersion);
    if (facts.ranFlows && pipeline.settings.rewindEnabled) {
      await captureRewindPoint(
        rewindEnvironment(plane, ids.pipelineId, pipeline),
        "update-end",
        ids.updateId,
      );
    }
    const events = recorder(plane, ids, pipeline.definition.name);
    events.hold();
    await events.updateProgress("COMPLETED");
    const held = events.takeHeld();
    // The event, the pipeline released and the update COMPLETED: one request.
    const released = plane.pipelines.endUpdateWrite(ids.pipelineId, ids.updateId, "IDLE", tablesWrittenBy);
    if (await transitionTogether(plane, ids, "COMPLETED", [released], held)) {
      await announceCompleted(plane, ids, facts);
      return handOn(plane, ids, facts, "COMPLETED");
    }
    // One by one: the event only if the update has not ended meanwhile.
    const now = await plane.updates.get(ids.pipelineId, ids.updateId);
    if (now && !isTerminal(now.state)) await plane.events.appendAll(held);
  }
  await plane.pipelines.endUpdate(ids.pipelineId, ids.updateId, "IDLE", tablesWrittenBy);
  const moved = await plane.updates.transition(ids.pipelineId, ids.updateId, "COMPLETED");
  // A retry after the transition publishes what the first attempt may not have (publishOnce).
  if (moved.update.state === "COMPLETED") await announceCompleted(plane, ids, facts);
  return handOn(plane, ids, facts, moved.update.state);
}

/** A completed run of an ordered run starts the next pipeline's (control/runs/ordered-run.ts). */
async function handOn(
  plane: ControlPlane,
  ids: UpdateIds,
  facts: FinishFacts,
  state: string,
): Promise<{ state: string }> {
  if (state === "COMPLETED" && facts.orderedRun) await continueOrderedRun(plane, ids, facts.orderedRun);
  return { state };
}

/** "Update Completed", once per update (docs/events.md). */
async function announceCompleted(plane: ControlPlane, ids: UpdateIds, facts: FinishFacts): Promise<void> {
  const { pipeline } = await loadPipeline(plane, ids.pipelineId, facts.definitionVersion);
  const origin = { ...ids, pipelineName: pipeline.definition.name, time: plane.clock() };
  await publishOnce(plane, updateCompleted(origin, facts));
}

/** What FinishUpdate needs of the update, read now (and whether it ended). */
async function factsOf(plane: ControlPlane, ids: UpdateIds): Promise<{ facts: FinishFacts; ended: boolean }> {
  const update = await plane.updates.get(ids.pipelineId, ids.updateId);
  if (!update) throw new UpdateNotFoundError(ids.pipelineId, ids.updateId);
  return { facts: finishFactsOf(update), ended: isTerminal(update.state) };
}

/**
 * The Catch path. `item` is the failed state's input when a RunFlow failed (its dataset and flow): a
 * function that ran out of time or memory names them, and the flow's unfinished batch is marked as
 * failed for size, so the next update plans it again in halves instead of running it as it was.
 */
export async function failUpdate(
  plane: ControlPlane,
  ids: UpdateIds,
  caught: CaughtError,
  item: { readonly dataset?: string; readonly flow?: string } = {},
): Promise<{ state: string }> {
  const error = await describeFailure(plane, ids, caught, item);
  const context = await openUpdate(plane, ids);
  const first = !isTerminal(context.update.state);
  if (first) {
    const failure = Object.assign(new Error(error.message), { name: caught.Error ?? "Error" });
    await context.events.updateProgress("FAILED", failure);
    await context.events.flush();
  }
  await plane.pipelines.endUpdate(ids.pipelineId, ids.updateId, "FAILED");
  const moved = await plane.updates.transition(ids.pipelineId, ids.updateId, "FAILED", { error });
  const { orderedRun } = finishFactsOf(moved.update);
  if (orderedRun && moved.outcome === "transitioned")
    await orderedRunEnded(plane, ids, orderedRun, `this run failed (${error.errorCode})`);
  if (first) await countIncompleteRewind(plane, ids, context.update);
  if (moved.update.state === "FAILED") {
    const origin = { ...ids, pipelineName: context.pipeline.definition.name, time: plane.clock() };
    const facts = finishFactsOf(context.update);
    await publishOnce(plane, updateFailed(origin, { ...facts, error: moved.update.error ?? error }));
  }
  return { state: moved.update.state };
}

/** A rewind that failed part-way leaves its pipeline blocked: counted, for the construct's alarm. */
async function countIncompleteRewind(
  plane: ControlPlane,
  ids: UpdateIds,
  update: UpdateRecord,
): Promise<void> {
  const intent = intentOf(update);
  if (!plane.metrics || intent.kind !== "rewind" || intent.dryRun) return;
  const pipeline = await plane.pipelines.get(ids.pipelineId);
  if (pipeline?.rewindBlocked && pipeline.rewindBlockedBy === ids.updateId)
    plane.metrics.record(rewindIncompleteMetrics(ids.pipelineId, ids.updateId));
}

/** The update's error for `caught`; a function limit is named with the item it stopped. */
async function describeFailure(
  plane: ControlPlane,
  ids: UpdateIds,
  caught: CaughtError,
  item: { readonly dataset?: string; readonly flow?: string },
) {
  const described = describeCaught(caught);
  const limit = functionLimitOf(caught);
  if (!limit || item.dataset === undefined) return described;
  const ran =
    limit === "time" ? "ran past its task function's timeout" : "ran out of its task function's memory";
  if (item.flow === undefined)
    return { ...described, message: `materialized view "${item.dataset}" ${ran}: ${described.message}` };
  const ref = { pipelineId: ids.pipelineId, flowId: item.flow };
  const batch = await markUnfinishedBatchOversized(plane.checkpoints, ref, FUNCTION_LIMIT_CODES[limit]);
  const size = batch?.size ? ` (${describeSize(batch.size)})` : "";
  const where = batch
    ? ` in batch ${batch.seq}${size}; the next update plans that batch again in halves`
    : "";
  return {
    ...described,
    message: `flow "${item.flow}" of "${item.dataset}" ${ran}${where}. If a batch of one file still does not fit, ${described.message}, or split the file`,
  };
}
