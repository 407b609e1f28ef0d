import { EventRecorder } from "../../engine/event-recorder.ts";
import type { UpdateRecord } from "../../store/updates-repository.ts";
import type { ControlPlane } from "../plane/control-plane.ts";

/** The engine's event recorder with an update's origin filled in (api.md "Event log"). */
export function recorder(
  plane: ControlPlane,
  update: Pick<UpdateRecord, "pipelineId" | "updateId">,
  pipelineName: string,
) {
  return new EventRecorder(
    plane.events,
    { pipeline_id: update.pipelineId, pipeline_name: pipelineName, update_id: update.updateId },
    plane.clock,
  );
}
