import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { routeLogsTo } from "../../../functions/runtime/ebb-logger.ts";
import { EventBridgeLifecycleEvents } from "../../../functions/runtime/eventbridge-lifecycle-events.ts";
import { WebhookLifecycleEvents } from "../../../functions/runtime/webhook-lifecycle-events.ts";
import { updateFailed } from "../../../shared/control/updates/lifecycle-event-builders.ts";

// The lifecycle-events adapters (docs/events.md): a webhook POSTed behind the update, and an
// EventBridge bus, each with bounded retries and timeouts, a failure a WARN and never the update's.

const event = updateFailed(
  { pipelineId: "p-1", pipelineName: "orders", updateId: "u-1", time: Date.UTC(2026, 11, 6) },
  {
    updateKind: "RUN",
    definitionVersion: 1,
    error: { errorCode: "EXPECTATION_VIOLATION", message: "bad row" },
  },
);
const quick = { attempts: 3, timeoutMs: 300, firstPauseMs: 10 };

interface Received {
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

let server: Server | undefined;
const logLines: Record<string, unknown>[] = [];

/** A local server answering each request with `answer(n)` (n from 0); undefined never answers. */
async function serve(
  answer: (n: number, res: ServerResponse) => void,
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      answer(received.length - 1, res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  routeLogsTo((line) => logLines.push(JSON.parse(line) as Record<string, unknown>));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

afterEach(async () => {
  routeLogsTo(undefined);
  logLines.length = 0;
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe("the webhook", () => {
  it("gets each event POSTed as JSON in EventBridge's envelope, after a failed attempt", async () => {
    const { url, received } = await serve((n, res) => res.writeHead(n === 0 ? 503 : 204).end());
    const webhook = new WebhookLifecycleEvents(`${url}/hook?token=secret`, quick);
    await webhook.publish(event);
    await webhook.drained();
    expect(received).toHaveLength(2);
    expect(received[1]!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(received[1]!.body)).toEqual({
      version: "0",
      id: "u-1:update-failed",
      source: "ebb",
      "detail-type": "Update Failed",
      time: event.detail.time,
      detail: event.detail,
    });
    expect(logLines).toEqual([]);
  });

  it("never holds the update up: a webhook that does not answer costs bounded attempts and a WARN", async () => {
    const { url, received } = await serve(() => undefined);
    const webhook = new WebhookLifecycleEvents(`${url}/hook?token=secret`, quick);
    const started = Date.now();
    await webhook.publish(event);
    expect(Date.now() - started).toBeLessThan(50);
    await webhook.drained();
    expect(received).toHaveLength(3);
    expect(logLines).toEqual([
      expect.objectContaining({
        level: "WARN",
        message: "lifecycle event not delivered to the webhook",
        webhook: url,
        event_id: "u-1:update-failed",
        attempts: 3,
        failure: expect.stringContaining("TimeoutError"),
      }),
    ]);
    // The log names the webhook's origin only: a token in its URL stays out.
    expect(JSON.stringify(logLines)).not.toContain("secret");
  });

  it("is a WARN, not an error, when there is nothing at the address", async () => {
    const webhook = new WebhookLifecycleEvents("http://127.0.0.1:9/nothing", quick);
    routeLogsTo((line) => logLines.push(JSON.parse(line) as Record<string, unknown>));
    await webhook.publish(event);
    await webhook.drained();
    expect(logLines).toEqual([expect.objectContaining({ level: "WARN", event_id: "u-1:update-failed" })]);
  });
});

describe("the EventBridge bus", () => {
  const credentials = { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "secret-example" };
  const withCredentials = async (work: () => Promise<void>) => {
    const saved = Object.fromEntries(Object.keys(credentials).map((k) => [k, process.env[k]]));
    Object.assign(process.env, credentials);
    try {
      await work();
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  };

  it("gets one signed PutEvents with the event on the bus", () =>
    withCredentials(async () => {
      const { url, received } = await serve((_, res) =>
        res
          .writeHead(200, { "content-type": "application/x-amz-json-1.1" })
          .end('{"FailedEntryCount":0,"Entries":[{"EventId":"e"}]}'),
      );
      await new EventBridgeLifecycleEvents(
        { busName: "ebb-bus", region: "eu-west-1", endpoint: url },
        quick,
      ).publish(event);
      expect(received).toHaveLength(1);
      const [put] = received;
      expect(put!.headers["x-amz-target"]).toBe("AWSEvents.PutEvents");
      expect(put!.headers["authorization"]).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/events\/aws4_request/,
      );
      const { Entries } = JSON.parse(put!.body) as { Entries: Record<string, unknown>[] };
      expect(Entries).toEqual([
        {
          EventBusName: "ebb-bus",
          Source: "ebb",
          DetailType: "Update Failed",
          Detail: JSON.stringify(event.detail),
          Time: Date.UTC(2026, 11, 6) / 1000,
          Resources: [],
        },
      ]);
      expect(logLines).toEqual([]);
    }));

  it("retries an entry the bus refused, then WARNs and goes on", () =>
    withCredentials(async () => {
      const { url, received } = await serve((_, res) =>
        res
          .writeHead(200)
          .end(
            '{"FailedEntryCount":1,"Entries":[{"ErrorCode":"InternalFailure","ErrorMessage":"try again"}]}',
          ),
      );
      await new EventBridgeLifecycleEvents(
        { busName: "ebb-bus", region: "eu-west-1", endpoint: url },
        quick,
      ).publish(event);
      expect(received).toHaveLength(3);
      expect(logLines).toEqual([
        expect.objectContaining({
          level: "WARN",
          message: "lifecycle event not put on the event bus",
          event_bus: "ebb-bus",
          failure: expect.stringContaining("InternalFailure"),
        }),
      ]);
    }));
});
