import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import { RequestTooLargeError, RouteNotFoundError, UnauthenticatedError } from "../../shared/api/errors.ts";
import { MAX_BODY_BYTES } from "../../shared/api/request-body.ts";
import { toErrorResponse } from "../../shared/api/error-response.ts";
import { EbbClient } from "../../shared/client/ebb-client.ts";
import { bearerAuth } from "../../shared/client/request-signer.ts";
import type { FunctionHost } from "./function-host.ts";
import { LOOPBACK } from "./loopback-port.ts";
import { MCP_PATH, McpEndpoint } from "./mcp-endpoint.ts";
import type { LocalRoute } from "./template-functions.ts";
import { readUiAsset } from "./ui-assets.ts";
import { UI_HEADER, UiSessions, expiredSessionCookie, sessionCookie } from "./ui-sessions.ts";

/**
 * API Gateway, locally: the stack's routes served on 127.0.0.1, each request checked for the bearer
 * token (`Authorization: Bearer <token>`, as the Databricks CLI and SDK send it) and turned into the
 * proxy event API Gateway would send the same handler. Outside `/api/` it serves the web UI's files
 * (no token needed), `/auth/session`, which trades the token for a browser session, the
 * Databricks host metadata, and `/mcp`: the MCP server over streamable HTTP, behind the same token.
 */

const API_PREFIX = "/api/";
const SESSION_PATH = "/auth/session";

/**
 * Databricks' host-metadata discovery, which the SDKs read without a token when a client starts
 * (`WorkspaceClient()` warns when it fails). Ebb runs on AWS and has no OAuth server, so it names
 * no `oidc_endpoint`: token auth needs none.
 */
const HOST_METADATA_PATH = "/.well-known/databricks-config";
const HOST_METADATA = { cloud: "AWS" } as const;

/**
 * How the web UI signs in here (ui/src/api/app-config.ts reads it): with the session this server
 * opens. On AWS the stack deploys its own `config.json` (the API's URL and Cognito).
 */
const UI_CONFIG_PATH = "/config.json";
const UI_CONFIG = { signIn: { kind: "session" } } as const;

/** API Gateway refuses larger payloads (10 MB) before any handler sees them. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

export interface ApiServerOptions {
  readonly routes: readonly LocalRoute[];
  readonly host: FunctionHost;
  readonly token: string;
  /** @default a free port */
  readonly port?: number;
  /** The web UI's built files (`ui/dist`). @default no UI */
  readonly uiAssets?: string;
}

export async function serveApi(
  options: ApiServerOptions,
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const routes = options.routes.map((route) => ({ ...route, pattern: routePattern(route.path) }));
  const sessions = new UiSessions(options.token);
  // Its client calls this same server, at the address it listens on.
  const mcp = new McpEndpoint(
    () => new EbbClient({ endpoint: endpointOf(server), auth: bearerAuth(options.token) }),
  );
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://local");
    if (url.pathname === MCP_PATH) {
      void serveMcp(mcp, request, response);
      return;
    }
    const answer = url.pathname.startsWith(API_PREFIX)
      ? handle(request, url)
      : url.pathname === SESSION_PATH
        ? session(request)
        : url.pathname === HOST_METADATA_PATH && request.method === "GET"
          ? Promise.resolve(reply(200, HOST_METADATA))
          : ui(request, url);
    void answer.then((result) => {
      response.writeHead(result.statusCode, result.headers as http.OutgoingHttpHeaders);
      response.end(result.body);
    });
  });

  async function ui(request: http.IncomingMessage, url: URL): Promise<APIGatewayProxyResult> {
    if (request.method !== "GET" && request.method !== "HEAD") return handle(request, url); // a route-not-found answer, as before
    if (options.uiAssets === undefined) return handle(request, url);
    if (url.pathname === UI_CONFIG_PATH) return reply(200, UI_CONFIG);
    const asset = await readUiAsset(options.uiAssets, url.pathname);
    return { statusCode: asset.status, headers: { ...asset.headers }, body: asset.body as string };
  }

  /** An MCP request: the token as for the API, then the session's own transport. */
  async function serveMcp(
    endpoint: McpEndpoint,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    const refuse = (result: APIGatewayProxyResult) => {
      response.writeHead(result.statusCode, result.headers as http.OutgoingHttpHeaders);
      response.end(result.body);
    };
    const authorization = request.headers.authorization;
    if (!sessions.authorized(authorization !== undefined ? { authorization } : {})) {
      const { status, body } = toErrorResponse(
        new UnauthenticatedError("send Authorization: Bearer $EBB_TOKEN, as the MCP client's headers"),
      );
      return refuse(reply(status, body));
    }
    const text = await readBody(request);
    if (text === undefined)
      return refuse(reply(413, { error_code: "REQUEST_LIMIT_EXCEEDED", message: "the body is over 10 MB" }));
    let body: unknown;
    try {
      body = text === null ? undefined : JSON.parse(text);
    } catch {
      return refuse(reply(400, { error_code: "MALFORMED_REQUEST", message: "an MCP message is JSON" }));
    }
    try {
      await endpoint.handle(request, response, body);
    } catch (error) {
      console.error(error);
      if (!response.headersSent) refuse(reply(500, { error_code: "INTERNAL_ERROR", message: String(error) }));
    }
  }

  /** POST `{token}` opens a browser session (HttpOnly cookie); DELETE closes it. */
  async function session(request: http.IncomingMessage): Promise<APIGatewayProxyResult> {
    if (request.method === "DELETE") {
      sessions.close(request.headers.cookie);
      return { statusCode: 204, headers: { "set-cookie": expiredSessionCookie() }, body: "" };
    }
    if (request.method !== "POST")
      return reply(405, { error_code: "METHOD_NOT_ALLOWED", message: "POST or DELETE" });
    const body = await readBody(request);
    let token: unknown;
    try {
      token = (JSON.parse(body ?? "{}") as { token?: unknown }).token;
    } catch {
      return reply(400, { error_code: "MALFORMED_REQUEST", message: 'send {"token": "…"} as JSON' });
    }
    const id = sessions.open(token);
    if (id === undefined) {
      return reply(401, {
        error_code: "UNAUTHENTICATED",
        message:
          "that is not this runtime's token: use EBB_TOKEN as npm start exports it (export EBB_TOKEN=$(cat <data folder>/api-token))",
      });
    }
    return { statusCode: 204, headers: { "set-cookie": sessionCookie(id) }, body: "" };
  }

  async function handle(request: http.IncomingMessage, url: URL): Promise<APIGatewayProxyResult> {
    try {
      const ui = request.headers[UI_HEADER];
      const headers = {
        ...(request.headers.authorization !== undefined
          ? { authorization: request.headers.authorization }
          : {}),
        ...(request.headers.cookie !== undefined ? { cookie: request.headers.cookie } : {}),
        ...(typeof ui === "string" ? { ui } : {}),
      };
      if (!sessions.authorized(headers)) {
        throw new UnauthenticatedError(
          "send Authorization: Bearer $EBB_TOKEN (npm start exports it from the api-token file in its data folder)",
        );
      }
      const method = request.method ?? "GET";
      const matches = routes
        .map((route) => ({ route, params: route.pattern.exec(url.pathname) }))
        .filter((m) => m.params);
      const match = matches.find((m) => m.route.method === method);
      if (!match?.params) throw new RouteNotFoundError(method, url.pathname);
      // A body declared over the limit is refused before it is read.
      const declared = Number(request.headers["content-length"] ?? 0);
      if (declared > MAX_BODY_BYTES) throw new RequestTooLargeError(declared, MAX_BODY_BYTES);
      const body = await readBody(request);
      if (body === undefined)
        return reply(413, { error_code: "REQUEST_LIMIT_EXCEEDED", message: "the body is over 10 MB" });
      const event = proxyEvent(request, url, match.route, match.params.groups ?? {}, body);
      return (await options.host.invoke(match.route.functionId, event)) as APIGatewayProxyResult;
    } catch (error) {
      const { status, body } = toErrorResponse(error);
      // A client that went away mid-body is not a server fault.
      if (status >= 500 && !request.destroyed) console.error(error);
      return reply(status, body);
    }
  }

  // What Node refuses before a handler sees it (headers or URL over its limit, a malformed request)
  // still answers the API's JSON error shape.
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return;
    const tooLarge = error.code === "HPE_HEADER_OVERFLOW";
    const body = JSON.stringify(
      tooLarge
        ? {
            error_code: "REQUEST_LIMIT_EXCEEDED",
            message: `the URL and headers are over ${http.maxHeaderSize} bytes: send fewer or shorter query parameters`,
          }
        : { error_code: "MALFORMED_REQUEST", message: "the request is not valid HTTP/1.1" },
    );
    socket.end(
      `HTTP/1.1 ${tooLarge ? "431 Request Header Fields Too Large" : "400 Bad Request"}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, LOOPBACK, resolve);
  });
  return {
    endpoint: endpointOf(server),
    close: async () => {
      await mcp.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

function endpointOf(server: http.Server): string {
  return `http://${LOOPBACK}:${(server.address() as AddressInfo).port}`;
}

/** `/api/2.0/pipelines/{pipeline_id}` → a pattern capturing one raw path segment per parameter. */
function routePattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((part) => {
      const parameter = /^\{(\w+)\}$/.exec(part)?.[1];
      return parameter ? `(?<${parameter}>[^/]+)` : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${source}/?$`);
}

async function readBody(request: http.IncomingMessage): Promise<string | null | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_PAYLOAD_BYTES) return undefined;
    chunks.push(chunk);
  }
  return size === 0 ? null : Buffer.concat(chunks).toString("utf8");
}

function proxyEvent(
  request: http.IncomingMessage,
  url: URL,
  route: LocalRoute,
  pathParameters: Record<string, string>,
  body: string | null,
): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(",") : value;
    multiValueHeaders[name] = Array.isArray(value) ? value : [value];
  }
  // No prototype: a parameter named `toString` or `__proto__` is a parameter like any other.
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  const multiQuery: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    (multiQuery[name] ??= []).push(value);
  }
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource: route.path,
    path: url.pathname,
    httpMethod: route.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      authorizer: undefined,
      protocol: "HTTP/1.1",
      httpMethod: route.method,
      identity: {
        sourceIp: request.socket.remoteAddress ?? LOOPBACK,
      } as APIGatewayProxyEvent["requestContext"]["identity"],
      path: url.pathname,
      stage: "local",
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: "local",
      resourcePath: route.path,
    },
  };
}

function reply(statusCode: number, body: unknown): APIGatewayProxyResult {
  return { statusCode, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}
