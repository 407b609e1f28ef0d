import { captureRewindPoint } from "../../rewind/rewind-points.ts";
import { isTerminal } from "../../store/updates-repository.ts";
import { UpdateNotFoundError } from "../../store/errors.ts";
import { loadPipeline, rewindEnvironment, type ControlPlane } from "../control-plane.ts";
import { recorder } from "../update-events.ts";
import { finishFactsOf, type FinishFacts } from "./finish-facts.ts";
import { transitionTogether } from "./step-writes.ts";
import { describeCaught, type CaughtError } from "./task-errors.ts";
import { openUpdate, type UpdateIds } from "./update-context.ts";

/**
 * The end of an execution. Success: the update COMPLETED, the pipeline released, and (rewind on) a
 * rewind point captured — the cheap, metadata-only capture semantics.md asks for after every
 * successful run (not after a rewind, a dry run or a validation). Failure (the Catch path): the update FAILED with its error and an event, the
 * pipeline released as FAILED; a rewind that failed part-way leaves its block in place.
 * Both are idempotent: a terminal update stays as it is.
 */

export async function finishUpdate(
  plane: ControlPlane,
  ids: UpdateIds,
  planned?: FinishFacts,
): Promise<{ state: string }> {
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
    if (await transitionTogether(plane, ids, "COMPLETED", [released], held)) return { state: "COMPLETED" };
    // One by one: the event only if the update has not ended meanwhile.
    const now = await plane.updates.get(ids.pipelineId, ids.updateId);
    if (now && !isTerminal(now.state)) await plane.events.appendAll(held);
  }
  await plane.pipelines.endUpdate(ids.pipelineId, ids.updateId, "IDLE", tablesWrittenBy);
  const moved = await plane.updates.transition(ids.pipelineId, ids.updateId, "COMPLETED");
  return { state: moved.update.state };
}

/** What FinishUpdate needs of the update, read now (and whether it ended). */
async function factsOf(plane: ControlPlane, ids: UpdateIds): Promise<{ facts: FinishFacts; ended: boolean }> {
  const update = await plane.updates.get(ids.pipelineId, ids.updateId);
  if (!update) throw new UpdateNotFoundError(ids.pipelineId, ids.updateId);
  return { facts: finishFactsOf(update), ended: isTerminal(update.state) };
}

export async function failUpdate(
  plane: ControlPlane,
  ids: UpdateIds,
  caught: CaughtError,
): Promise<{ state: string }> {
  const error = describeCaught(caught);
  const context = await openUpdate(plane, ids);
  if (!isTerminal(context.update.state)) {
    const failure = Object.assign(new Error(error.message), { name: caught.Error ?? "Error" });
    await context.events.updateProgress("FAILED", failure);
    await context.events.flush();
  }
  await plane.pipelines.endUpdate(ids.pipelineId, ids.updateId, "FAILED");
  const moved = await plane.updates.transition(ids.pipelineId, ids.updateId, "FAILED", { error });
  return { state: moved.update.state };
}
