import { z } from "zod";
import type { LifecycleEvent } from "../../api/lifecycle-events.ts";
import { LIFECYCLE_EVENT_SOURCE, LIFECYCLE_EVENTS } from "../../api/lifecycle-events.ts";
import { listAllKeys, type ObjectStore } from "../../object-store/object-store.ts";
import { updateStateKey } from "../../store/bucket-layout.ts";

/**
 * The lifecycle-events port (docs/events.md): delivers events to whoever listens outside the
 * pipeline — an EventBridge bus on AWS, a webhook locally, nobody when neither is set up.
 *
 * Contract: `publish` never throws and never holds an update up for long. Once the event is
 * delivered (the bus took it, the webhook answered 2xx), the adapter calls `delivered` — possibly
 * after `publish` returned (the webhook delivers behind the update). A delivery that fails is the
 * adapter's to log (a WARN), and `delivered` is not called: the outbox sends it again later.
 */
export interface LifecycleEvents {
  /** Whether anyone listens: where nobody does, the outbox keeps no claim and sweeps nothing. */
  readonly hasDestination: boolean;
  publish(event: LifecycleEvent, delivered?: () => Promise<void>): Promise<void>;
}

/** Nobody listens. */
export const NO_LIFECYCLE_EVENTS: LifecycleEvents = { hasDestination: false, publish: async () => undefined };

type Ports = { readonly bucket: ObjectStore; readonly lifecycle: LifecycleEvents };

/** The update's outbox: one claim per occurrence (`<kind>.json`), and a mark once it is delivered. */
function outboxPrefix(pipelineId: string, updateId: string): string {
  return updateStateKey(pipelineId, updateId, "lifecycle/");
}

/** The key that claims one occurrence of an event, and keeps the event until it is delivered. */
export function lifecycleEventKey(event: LifecycleEvent): string {
  const { pipeline_id, update_id } = event.detail;
  return `${outboxPrefix(pipeline_id, update_id)}${LIFECYCLE_EVENTS[event["detail-type"]].kind}.json`;
}

/** The mark beside a claim that says its event was delivered. */
function deliveredKey(claimKey: string): string {
  return claimKey.replace(/\.json$/, ".delivered");
}

/**
 * Publishes `event` at least once per occurrence, and once in the ordinary case, though the step
 * that emits it is retried (a task's Retry, a crash):
 *
 * 1. Claim the event's key in the bucket (a conditional put that keeps the event: the outbox).
 * 2. Hand it to the port; once delivered, mark it delivered beside the claim.
 * 3. A later attempt that finds the claim taken sends it again only when it has no mark — a crash
 *    between 1 and 2, or a delivery that failed — and so does every sweep of the outbox
 *    (`resendUndelivered`). A reader may so see an event twice: it deduplicates on `event_id`.
 */
export async function publishOnce(ports: Ports, event: LifecycleEvent): Promise<void> {
  // Nobody listens: no claim to keep, nothing to send again.
  if (!ports.lifecycle.hasDestination) return;
  const key = lifecycleEventKey(event);
  const claimed = await ports.bucket.putIfAbsent(key, new TextEncoder().encode(JSON.stringify(event)));
  if (claimed !== "created" && (await ports.bucket.head(deliveredKey(key))) !== undefined) return;
  await send(ports, key, event);
}

/**
 * Sends again every event of the update claimed and not marked delivered (step 3): when the update
 * is stopped or found lost, and when the pipeline's next update starts. (Not at FinishUpdate: the
 * webhook delivers behind the update, so its own events would still be on their way.)
 */
export async function resendUndelivered(ports: Ports, pipelineId: string, updateId: string): Promise<number> {
  if (!ports.lifecycle.hasDestination) return 0;
  const keys = new Set(
    (await listAllKeys(ports.bucket, outboxPrefix(pipelineId, updateId))).map((o) => o.key),
  );
  let sent = 0;
  for (const key of [...keys].filter((k) => k.endsWith(".json")).sort()) {
    if (keys.has(deliveredKey(key))) continue;
    const event = claimedEvent.safeParse(JSON.parse(new TextDecoder().decode(await ports.bucket.get(key))));
    // A claim Ebb cannot read back is left (the event log keeps the occurrence).
    if (!event.success) continue;
    // Delivered since the listing (a delivery behind the update, just done).
    if ((await ports.bucket.head(deliveredKey(key))) !== undefined) continue;
    await send(ports, key, event.data as LifecycleEvent);
    sent += 1;
  }
  return sent;
}

async function send(ports: Ports, key: string, event: LifecycleEvent): Promise<void> {
  await ports.lifecycle.publish(event, async () => {
    await ports.bucket.put(deliveredKey(key), new TextEncoder().encode(event.detail.event_id));
  });
}

/** A claim as stored (parsed, not cast): the envelope, with the detail its type's schema checks. */
const claimedEvent = z
  .object({
    source: z.literal(LIFECYCLE_EVENT_SOURCE),
    "detail-type": z.enum(Object.keys(LIFECYCLE_EVENTS) as [keyof typeof LIFECYCLE_EVENTS]),
    detail: z.record(z.string(), z.unknown()),
  })
  .refine((event) => LIFECYCLE_EVENTS[event["detail-type"]].schema.safeParse(event.detail).success);
