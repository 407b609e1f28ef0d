import { UpdateNotFoundError } from "../../../store/errors.ts";
import type { UpdateRecord } from "../../../store/updates-repository.ts";
import type { RewindEnvironment } from "../../../rewind/rewind-environment.ts";
import type { ValidatedPipeline } from "../../../pipeline/validate-pipeline.ts";
import type { EventRecorder } from "../../../engine/event-recorder.ts";
import { loadPipeline, rewindEnvironment, type ControlPlane } from "../../plane/control-plane.ts";
import { recorder } from "../update-events.ts";

/** What every step of an update's execution receives: ids only (architecture.md "The shape"). */
export interface UpdateIds {
  readonly pipelineId: string;
  readonly updateId: string;
}

/** An update with the definition version it runs, loaded afresh by each step. */
export interface UpdateContext {
  readonly update: UpdateRecord;
  readonly pipeline: ValidatedPipeline;
  readonly env: RewindEnvironment;
  readonly events: EventRecorder;
}

export async function openUpdate(plane: ControlPlane, ids: UpdateIds): Promise<UpdateContext> {
  const update = await plane.updates.get(ids.pipelineId, ids.updateId);
  if (!update) throw new UpdateNotFoundError(ids.pipelineId, ids.updateId);
  const { pipeline } = await loadPipeline(plane, ids.pipelineId, update.definitionVersion);
  return {
    update,
    pipeline,
    env: rewindEnvironment(plane, ids.pipelineId, pipeline),
    events: recorder(plane, update, pipeline.definition.name),
  };
}
