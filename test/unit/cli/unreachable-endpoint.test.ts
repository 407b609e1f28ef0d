import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT, runCli } from "../../../shared/cli/main.ts";

/**
 * `ebb` when nothing answers: the runtime is not running, was killed mid-update, or the endpoint is
 * mistyped. The user gets where the CLI tried and the way out, never `TypeError: fetch failed` and a stack.
 */
describe("ebb against an endpoint that does not answer", () => {
  /** Accepts each connection and closes it before any answer: a runtime killed mid-request. */
  let dropping: Server;
  let closedPort: number;

  const ebb = async (...args: string[]) => {
    let err = "";
    const code = await runCli([...args, "--token", "t"], {
      out: () => undefined,
      err: (text) => (err += text),
      confirm: async () => true,
      width: 80,
    });
    return { code, err };
  };
  const listen = (server: Server) =>
    new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
    );

  beforeAll(async () => {
    dropping = createServer((request) => request.socket.destroy());
    const closed = createServer();
    closedPort = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
  });
  afterAll(() => new Promise((resolve) => dropping.close(resolve)));

  it("names the endpoint it could not reach and how to start the runtime, without a stack", async () => {
    const endpoint = `http://127.0.0.1:${closedPort}`;
    const { code, err } = await ebb("pipelines", "list", "--endpoint", endpoint);
    expect(code).toBe(EXIT.failed);
    expect(err).toBe(
      `ebb: cannot reach Ebb at ${endpoint} (ECONNREFUSED): is the runtime running (npm start) and is EBB_ENDPOINT (or --endpoint) its address?\n`,
    );
  });

  it("says a write whose connection dropped may have run, and how to look", async () => {
    const endpoint = `http://127.0.0.1:${await listen(dropping)}`;
    const { code, err } = await ebb("run", "00000000-0000-4000-8000-000000000000", "--endpoint", endpoint);
    expect(code).toBe(EXIT.failed);
    expect(err).toMatch(
      new RegExp(
        `^ebb: the connection to Ebb at ${endpoint} ended without an answer \\(\\w+\\): .*the request may have run: look before sending it again \\(ebb pipelines get <id>\\)\\n$`,
      ),
    );
    expect(err).not.toContain("    at ");
  });

  it("refuses an endpoint that is not an http(s) URL before sending anything", async () => {
    const { code, err } = await ebb("pipelines", "list", "--endpoint", "127.0.0.1:8080");
    expect(code).toBe(EXIT.usage);
    expect(err).toContain('the API endpoint "127.0.0.1:8080" is not an http(s) URL');
  });
});
