import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EbbApiError, EbbClient } from "../../../shared/client/ebb-client.ts";
import { bearerAuth } from "../../../shared/client/request-signer.ts";

/** A real HTTP server whose first `failures` requests are answered by `fail`, the rest with `{}`. */
async function flakyServer(failures: number, fail: (res: ServerResponse) => void) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.method!);
    if (seen.length <= failures) return fail(res);
    res.setHeader("content-type", "application/json");
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const client = new EbbClient({ endpoint: `http://127.0.0.1:${port}`, auth: bearerAuth("t") });
  return { server, client, seen };
}

const dropConnection = (res: ServerResponse) => res.socket?.destroy();
const answer = (status: number) => (res: ServerResponse) => {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify({ error_code: `HTTP_${status}`, message: "try later" }));
};

describe("the client sends a request again only when that is safe", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("reads again after a dropped connection and after the gateway's 503", async () => {
    for (const fail of [dropConnection, answer(503)]) {
      const flaky = await flakyServer(2, fail);
      server = flaky.server;
      expect(await flaky.client.request("GET", "/api/2.0/pipelines")).toEqual({ ok: true });
      expect(flaky.seen).toEqual(["GET", "GET", "GET"]);
      await new Promise<void>((resolve) => flaky.server.close(() => resolve()));
      server = undefined;
    }
  });

  it("sends a throttled write again, and never a write whose connection dropped (it may have run)", async () => {
    const throttled = await flakyServer(1, answer(429));
    server = throttled.server;
    expect(await throttled.client.request("POST", "/api/2.0/pipelines", { body: {} })).toEqual({ ok: true });
    expect(throttled.seen).toEqual(["POST", "POST"]);
    await new Promise<void>((resolve) => throttled.server.close(() => resolve()));

    const dropped = await flakyServer(1, dropConnection);
    server = dropped.server;
    await expect(dropped.client.request("POST", "/api/2.0/pipelines", { body: {} })).rejects.toThrow();
    expect(dropped.seen).toEqual(["POST"]);
  });

  it("gives up after three retries with the last answer, and never retries a refusal", async () => {
    const down = await flakyServer(10, answer(503));
    server = down.server;
    const error = await down.client.request("GET", "/api/2.0/pipelines").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EbbApiError);
    expect((error as EbbApiError).status).toBe(503);
    expect(down.seen).toHaveLength(4);
    await new Promise<void>((resolve) => down.server.close(() => resolve()));

    const refusing = await flakyServer(10, answer(409));
    server = refusing.server;
    await expect(refusing.client.request("GET", "/api/2.0/pipelines")).rejects.toMatchObject({ status: 409 });
    expect(refusing.seen).toHaveLength(1);
  });
});
