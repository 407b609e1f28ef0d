import { defaultProvider } from "@aws-sdk/credential-provider-node";
import { SignatureV4 } from "@smithy/signature-v4";
import type { LifecycleEvent } from "../../shared/api/lifecycle-events.ts";
import type { LifecycleEvents } from "../../shared/control/plane/lifecycle-events.ts";
import { NodeSha256 } from "../../shared/store/node-sha256.ts";
import { logger } from "./ebb-logger.ts";
import { deliveredEnvelope, withRetries, type DeliveryLimits } from "./lifecycle-delivery.ts";

/**
 * Lifecycle events on an EventBridge bus (`PutEvents`, the AWS JSON protocol, signed with SigV4 and
 * the function's own credentials — the same way the CLI signs, so no further SDK client is bundled
 * into every function). The function waits for the bus, briefly (a frozen Lambda would never send it
 * later): a few short attempts, then a WARN, and the step goes on.
 */

/** EventBridge answers in tens of milliseconds; a task function must not wait long for it. */
export const EVENT_BUS_LIMITS: DeliveryLimits = { attempts: 3, timeoutMs: 2_000, firstPauseMs: 200 };

export interface EventBusTarget {
  readonly busName: string;
  readonly region: string;
  /** `https://events.<region>.amazonaws.com` unless given (a stand-in). */
  readonly endpoint?: string;
}

export class EventBridgeLifecycleEvents implements LifecycleEvents {
  readonly hasDestination = true;
  readonly #target: EventBusTarget;
  readonly #limits: DeliveryLimits;
  readonly #signer: SignatureV4;

  constructor(target: EventBusTarget, limits: DeliveryLimits = EVENT_BUS_LIMITS) {
    this.#target = target;
    this.#limits = limits;
    this.#signer = new SignatureV4({
      service: "events",
      region: target.region,
      credentials: defaultProvider(),
      sha256: NodeSha256 as never,
    });
  }

  async publish(event: LifecycleEvent, delivered?: () => Promise<void>): Promise<void> {
    const envelope = deliveredEnvelope(event);
    const body = JSON.stringify({
      Entries: [
        {
          EventBusName: this.#target.busName,
          Source: envelope.source,
          DetailType: envelope["detail-type"],
          Detail: JSON.stringify(envelope.detail),
          Time: Math.floor(Date.parse(envelope.time) / 1000),
          Resources: [],
        },
      ],
    });
    const failure = await withRetries(this.#limits, (signal) => this.#put(body, signal));
    if (failure !== undefined) {
      logger.warn("lifecycle event not put on the event bus", {
        event_bus: this.#target.busName,
        event_id: event.detail.event_id,
        detail_type: event["detail-type"],
        failure,
      });
    } else await delivered?.().catch(() => undefined);
  }

  async #put(body: string, signal: AbortSignal): Promise<void> {
    const url = new URL(this.#target.endpoint ?? `https://events.${this.#target.region}.amazonaws.com/`);
    const signed = await this.#signer.sign({
      method: "POST",
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      headers: {
        host: url.host,
        "content-type": "application/x-amz-json-1.1",
        "x-amz-target": "AWSEvents.PutEvents",
      },
      body,
    });
    const headers = Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name !== "host"));
    const response = await fetch(url, { method: "POST", headers, body, signal });
    const answer = (await response.json().catch(() => ({}))) as {
      FailedEntryCount?: number;
      Entries?: { ErrorCode?: string; ErrorMessage?: string }[];
      message?: string;
    };
    if (!response.ok) throw new Error(`PutEvents answered HTTP ${response.status}: ${answer.message ?? ""}`);
    if ((answer.FailedEntryCount ?? 0) > 0) {
      const entry = answer.Entries?.[0];
      throw new Error(`PutEvents refused the event: ${entry?.ErrorCode ?? ""} ${entry?.ErrorMessage ?? ""}`);
    }
  }
}
