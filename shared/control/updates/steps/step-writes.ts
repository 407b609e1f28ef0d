import type { NewEvent } from "../../../store/event-log-repository.ts";
import { MAX_WRITES_TOGETHER, type StoreWrite } from "../../../store/store-writes.ts";
import type { UpdateState } from "../../../store/updates-repository.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import { recordEventMetrics } from "../../metrics/metered-event-log.ts";
import type { UpdateIds } from "./update-context.ts";

/**
 * A step's end in one request: the update's transition, the pipeline's change and the events the
 * step held, all or none (store-writes.ts). So a step of an update with nothing new is one DynamoDB
 * write, not one per table plus a batch of events, and no reader sees the new state without the
 * events before it. False: nothing was written — the update has ended, the pipeline is no longer
 * this update's, or there are more events than go together — and the caller makes the writes one by
 * one, as the outcome of each directs.
 */
export async function transitionTogether(
  plane: ControlPlane,
  ids: UpdateIds,
  state: UpdateState,
  writes: readonly StoreWrite[],
  events: readonly NewEvent[],
): Promise<boolean> {
  if (1 + writes.length + events.length > MAX_WRITES_TOGETHER) return false;
  const written = await plane.updates.transitionWith(ids.pipelineId, ids.updateId, state, [
    ...writes,
    ...plane.events.appendWrites(events),
  ]);
  if (written) recordEventMetrics(plane.metrics, events);
  return written;
}
