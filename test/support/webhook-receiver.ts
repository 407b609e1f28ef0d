import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A lifecycle event as the webhook receives it (docs/events.md). */
export interface DeliveredEvent {
  readonly id: string;
  readonly source: string;
  readonly "detail-type": string;
  readonly detail: Record<string, unknown> & { readonly update_id: string };
}

export interface WebhookReceiver {
  /** The URL to subscribe (`EBB_LIFECYCLE_WEBHOOK_URL`, `startTestControlPlane({ webhook })`). */
  readonly url: string;
  /** Every event taken (answered 204), in arrival order. */
  readonly received: DeliveredEvent[];
  /** Detail types answered 503 for now: a webhook that is down for those. */
  readonly refused: Set<string>;
  close(): Promise<void>;
}

/** A local HTTP server subscribed as the lifecycle-events webhook: what a user's receiver sees. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: DeliveredEvent[] = [];
  const refused = new Set<string>();
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const event = JSON.parse(body) as DeliveredEvent;
      if (refused.has(event["detail-type"])) return void response.writeHead(503).end();
      received.push(event);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/ebb-events`,
    received,
    refused,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
