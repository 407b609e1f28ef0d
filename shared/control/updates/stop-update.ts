import { isTerminal } from "../../store/updates-repository.ts";
import { requirePipeline, type ControlPlane } from "../plane/control-plane.ts";
import { recorder } from "./update-events.ts";
import { announceEndedOutside } from "./update-end-events.ts";

/**
 * `POST /pipelines/{id}/stop` (api.md): the running update's execution is stopped, the update is
 * CANCELED and the pipeline released. A pipeline with nothing running is left as it is. The tasks
 * see the CANCELED state between batches too, so a batch in flight finishes its protocol and no more
 * start.
 */
export async function stopPipeline(plane: ControlPlane, pipelineId: string): Promise<Record<string, never>> {
  const pipeline = await requirePipeline(plane, pipelineId);
  const updateId = pipeline.activeUpdateId;
  if (updateId === undefined) return {};
  const update = await plane.updates.get(pipelineId, updateId);
  if (update?.executionArn) await plane.executions.stop(update.executionArn, "stopped through the API");
  if (update && !isTerminal(update.state)) {
    const error = { errorCode: "CANCELED", message: "the update was stopped through the API" };
    const moved = await plane.updates.transition(pipelineId, updateId, "CANCELED", { error });
    await recorder(plane, update, pipeline.name).updateProgress("CANCELED");
    if (moved.outcome === "transitioned")
      await announceEndedOutside(plane, update, pipeline, { state: "CANCELED", error });
  }
  await plane.pipelines.endUpdate(pipelineId, updateId, "IDLE");
  return {};
}
