import type { LifecycleEvent } from "../../shared/api/lifecycle-events.ts";

/**
 * An event as it leaves Ebb, on a bus or to a webhook: EventBridge's envelope (`id`, `source`,
 * `detail-type`, `time`, `detail`), so a reader handles both the same way. The envelope's id is the
 * detail's `event_id`, the same for every delivery of one occurrence.
 */
export function deliveredEnvelope(event: LifecycleEvent) {
  return {
    version: "0",
    id: event.detail.event_id,
    source: event.source,
    "detail-type": event["detail-type"],
    time: event.detail.time,
    detail: event.detail,
  };
}

/** Bounded retries: how many attempts, each how long at most, and the pause before the second. */
export interface DeliveryLimits {
  readonly attempts: number;
  readonly timeoutMs: number;
  readonly firstPauseMs: number;
}

/**
 * `deliver` tried up to `attempts` times, each under its own deadline, pausing twice as long after
 * each failure. Answers undefined when one attempt succeeded, else the last failure's description.
 */
export async function withRetries(
  limits: DeliveryLimits,
  deliver: (signal: AbortSignal) => Promise<void>,
): Promise<string | undefined> {
  let failure = "not attempted";
  for (let attempt = 0; attempt < limits.attempts; attempt++) {
    if (attempt > 0)
      await new Promise((resolve) => setTimeout(resolve, limits.firstPauseMs * 2 ** (attempt - 1)));
    try {
      await deliver(AbortSignal.timeout(limits.timeoutMs));
      return undefined;
    } catch (error) {
      failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
  }
  return failure;
}
