import { randomUUID } from "node:crypto";
import type http from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { EbbClient } from "../../shared/client/ebb-client.ts";
import { createEbbMcpServer } from "../../shared/mcp/ebb-mcp-server.ts";
import { EBB_VERSION } from "../../shared/mcp/ebb-version.ts";

/**
 * `/mcp` on the local runtime: Ebb's MCP server over streamable HTTP, behind the API's token (the
 * caller checks it). Each MCP session gets its own server, so a rewind plan is the session's own;
 * sessions end when the client deletes them, and the oldest are closed past `MAX_SESSIONS`.
 */

export const MCP_PATH = "/mcp";
const MAX_SESSIONS = 64;

export class McpEndpoint {
  readonly #sessions = new Map<string, StreamableHTTPServerTransport>();

  /** `client`: the API the tools call, asked for at each new session. */
  constructor(readonly client: () => EbbClient) {}

  async handle(request: http.IncomingMessage, response: http.ServerResponse, body: unknown): Promise<void> {
    const sessionId = request.headers["mcp-session-id"];
    const known = typeof sessionId === "string" ? this.#sessions.get(sessionId) : undefined;
    if (known) return known.handleRequest(request, response, body);
    if (sessionId !== undefined || request.method !== "POST" || !isInitializeRequest(body)) {
      return json(response, sessionId === undefined ? 400 : 404, {
        jsonrpc: "2.0",
        error: {
          code: -32000,
          message:
            sessionId === undefined
              ? "no MCP session: start one with an initialize request"
              : "this MCP session has ended: initialize a new one",
        },
        id: null,
      });
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.#sessions.set(id, transport);
        this.#closeOldest();
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.#sessions.delete(transport.sessionId);
    };
    await createEbbMcpServer(this.client(), EBB_VERSION).connect(transport);
    await transport.handleRequest(request, response, body);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#sessions.values()].map((transport) => transport.close()));
  }

  #closeOldest(): void {
    for (const [id, transport] of this.#sessions) {
      if (this.#sessions.size <= MAX_SESSIONS) return;
      this.#sessions.delete(id);
      void transport.close();
    }
  }
}

function json(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
