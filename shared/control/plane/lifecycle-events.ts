import type { LifecycleEvent } from "../../api/lifecycle-events.ts";
import { LIFECYCLE_EVENTS } from "../../api/lifecycle-events.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { updateStateKey } from "../../store/bucket-layout.ts";

/**
 * The lifecycle-events port (docs/events.md): delivers events to whoever listens outside the
 * pipeline — an EventBridge bus on AWS, a webhook locally, nobody when neither is set up.
 *
 * Contract: `publish` never throws and never holds an update up for long. A delivery that fails is
 * the adapter's to log (a WARN); the update goes on, and the pipeline's event log stays the record.
 */
export interface LifecycleEvents {
  publish(event: LifecycleEvent): Promise<void>;
}

/** Nobody listens. */
export const NO_LIFECYCLE_EVENTS: LifecycleEvents = { publish: async () => undefined };

/** The key that claims one occurrence of an event, and keeps the event as it was published. */
export function lifecycleEventKey(event: LifecycleEvent): string {
  const { pipeline_id, update_id } = event.detail;
  return updateStateKey(
    pipeline_id,
    update_id,
    `lifecycle/${LIFECYCLE_EVENTS[event["detail-type"]].kind}.json`,
  );
}

/**
 * Publishes `event` once per occurrence, though the step that emits it is retried (a task's Retry, a
 * crash): the first attempt to claim the event's key in the bucket (a conditional put, which keeps the
 * event) publishes it, and every later attempt finds the key taken. A crash between the claim and
 * the delivery loses that delivery; the event log still has the occurrence.
 */
export async function publishOnce(
  ports: { readonly bucket: ObjectStore; readonly lifecycle: LifecycleEvents },
  event: LifecycleEvent,
): Promise<void> {
  const claimed = await ports.bucket.putIfAbsent(
    lifecycleEventKey(event),
    new TextEncoder().encode(JSON.stringify(event)),
  );
  if (claimed === "created") await ports.lifecycle.publish(event);
}
