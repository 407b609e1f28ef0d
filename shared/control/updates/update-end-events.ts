import type { PipelineRecord } from "../../store/pipelines-repository.ts";
import type { UpdateError, UpdateRecord } from "../../store/updates-repository.ts";
import { publishOnce, resendUndelivered } from "../plane/lifecycle-events.ts";
import type { ControlPlane } from "../plane/control-plane.ts";
import { updateCanceled, updateFailed } from "./lifecycle-event-builders.ts";
import { finishFactsOf } from "./finish-facts.ts";

/**
 * The lifecycle events of an update ended outside its state machine (docs/events.md): stopped
 * through the API ("Update Canceled"), or found with its execution gone ("Update Failed" with
 * `EXECUTION_LOST`). Each goes through the outbox, which is then swept: an event of the update claimed
 * and not delivered (a crash between claim and send) is sent again here.
 */
export async function announceEndedOutside(
  plane: ControlPlane,
  update: UpdateRecord,
  pipeline: Pick<PipelineRecord, "name">,
  ended: { readonly state: "CANCELED" | "FAILED"; readonly error: UpdateError },
): Promise<void> {
  const origin = { ...update, pipelineName: pipeline.name, time: plane.clock() };
  const facts = finishFactsOf(update);
  await publishOnce(
    plane,
    ended.state === "CANCELED"
      ? updateCanceled(origin, { ...facts, message: ended.error.message })
      : updateFailed(origin, { ...facts, error: ended.error }),
  );
  await resendUndelivered(plane, update.pipelineId, update.updateId);
}

/**
 * The outbox of the pipeline's newest update before a new one starts: what it claimed and never
 * delivered (its last step crashed, the bus or webhook was down) is sent now.
 */
export async function resendLatestUndelivered(plane: ControlPlane, pipelineId: string): Promise<void> {
  if (!plane.lifecycle.hasDestination) return;
  const [latest] = (await plane.updates.list(pipelineId, { limit: 1 })).items;
  if (latest) await resendUndelivered(plane, pipelineId, latest.updateId);
}
