import type { LifecycleEvent } from "../../shared/api/lifecycle-events.ts";
import type { LifecycleEvents } from "../../shared/control/plane/lifecycle-events.ts";
import { logger } from "./ebb-logger.ts";
import { deliveredEnvelope, withRetries, type DeliveryLimits } from "./lifecycle-delivery.ts";

/**
 * Lifecycle events POSTed as JSON to a webhook (the local runtime's `--webhook` /
 * `EBB_EVENTS_WEBHOOK`, docs/events.md). Delivery happens behind the update, in order, one event at a
 * time: `publish` only queues it, so a slow or failing webhook never holds an update up or fails it.
 * Each event gets a few attempts, each with a timeout; one that still fails is a WARN in the log.
 */

export const WEBHOOK_LIMITS: DeliveryLimits = { attempts: 3, timeoutMs: 5_000, firstPauseMs: 500 };

export class WebhookLifecycleEvents implements LifecycleEvents {
  readonly hasDestination = true;
  readonly #url: string;
  /** What the log names: the origin only, as a path or query may hold a token. */
  readonly #origin: string;
  readonly #limits: DeliveryLimits;
  #queue: Promise<void> = Promise.resolve();
  /**
   * Events queued and not yet delivered or given up, by id: the outbox's sweep right after a step
   * published one finds it not yet marked delivered, and must not queue it twice.
   */
  readonly #inFlight = new Set<string>();

  constructor(url: string, limits: DeliveryLimits = WEBHOOK_LIMITS) {
    this.#url = url;
    this.#origin = URL.canParse(url) ? new URL(url).origin : "(not a URL)";
    this.#limits = limits;
  }

  publish(event: LifecycleEvent, delivered?: () => Promise<void>): Promise<void> {
    const id = event.detail.event_id;
    if (this.#inFlight.has(id)) return Promise.resolve();
    this.#inFlight.add(id);
    this.#queue = this.#queue
      .then(() => this.#deliver(event, delivered))
      .catch(() => undefined)
      .finally(() => this.#inFlight.delete(id));
    return Promise.resolve();
  }

  /** Settles when every event queued so far is delivered or given up. */
  drained(): Promise<void> {
    return this.#queue;
  }

  async #deliver(event: LifecycleEvent, delivered?: () => Promise<void>): Promise<void> {
    const body = JSON.stringify(deliveredEnvelope(event));
    const failure = await withRetries(this.#limits, async (signal) => {
      const response = await fetch(this.#url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        signal,
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`the webhook answered HTTP ${response.status}`);
    });
    if (failure !== undefined) {
      logger.warn("lifecycle event not delivered to the webhook", {
        webhook: this.#origin,
        event_id: event.detail.event_id,
        detail_type: event["detail-type"],
        attempts: this.#limits.attempts,
        failure,
      });
    } else await delivered?.().catch(() => undefined);
  }
}
