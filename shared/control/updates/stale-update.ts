import type { PipelineRecord } from "../../store/pipelines-repository.ts";
import { isTerminal } from "../../store/updates-repository.ts";
import type { ControlPlane } from "../plane/control-plane.ts";
import { recorder } from "./update-events.ts";
import { announceEndedOutside } from "./update-end-events.ts";

/**
 * No pipeline stays held by an update nobody runs (a crash of the runtime mid-update, an execution
 * stopped or timed out outside Ebb). Before an update starts, the pipeline's active update is looked
 * at: when its execution no longer runs (DescribeExecution, or the local runner's record, which a
 * restart empties), the update is FAILED with `EXECUTION_LOST` and the pipeline released, so the new
 * update can start. An update ended but still holding the pipeline (a finish step cut short) is
 * released the same way.
 *
 * An update's record names its execution before StartExecution is called, so an execution that does
 * not exist yet is not lost while the update is young: it may be between its record and its start.
 */

/** How long an update's execution may be absent after its record was written (its launch). */
export const LAUNCH_GRACE_MS = 60_000;

export const EXECUTION_LOST = {
  errorCode: "EXECUTION_LOST",
  message:
    "the update's execution ended without finishing it (the runtime stopped, or the execution was stopped or timed out); its committed batches are kept: start a new update to continue",
} as const;

/** The pipeline as it is after freeing it from a stale update (unchanged when its update runs). */
export async function releaseStaleUpdate(
  plane: ControlPlane,
  record: PipelineRecord,
  launches: "may-be-launching" | "none-launching" = "may-be-launching",
): Promise<PipelineRecord> {
  const updateId = record.activeUpdateId;
  if (updateId === undefined) return record;
  const update = await plane.updates.get(record.pipelineId, updateId);
  if (update && !isTerminal(update.state)) {
    const status =
      update.executionArn === undefined ? "absent" : await plane.executions.status(update.executionArn);
    if (status === "running") return record;
    const young = plane.clock() - update.createdAt < LAUNCH_GRACE_MS;
    if (status === "absent" && young && launches === "may-be-launching") return record;
    const moved = await plane.updates.transition(record.pipelineId, updateId, "FAILED", {
      error: EXECUTION_LOST,
    });
    if (moved.outcome === "transitioned") {
      await recorder(plane, update, record.name).updateProgress(
        "FAILED",
        Object.assign(new Error(EXECUTION_LOST.message), { name: EXECUTION_LOST.errorCode }),
      );
      await announceEndedOutside(plane, update, record, { state: "FAILED", error: EXECUTION_LOST });
    }
  }
  await plane.pipelines.endUpdate(record.pipelineId, updateId, "FAILED");
  return (await plane.pipelines.get(record.pipelineId)) ?? record;
}

/**
 * Every pipeline freed of a stale update, as the local runtime does when it starts again on its data
 * folder (its executions died with the previous process, launching ones too); answers the updates it
 * failed.
 */
export async function releaseStaleUpdates(plane: ControlPlane): Promise<string[]> {
  const failed: string[] = [];
  for (const record of await plane.pipelines.list()) {
    if (record.activeUpdateId === undefined) continue;
    const released = await releaseStaleUpdate(plane, record, "none-launching");
    if (released.activeUpdateId !== record.activeUpdateId) failed.push(record.activeUpdateId);
  }
  return failed;
}
