import { randomUUID, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import { RouteNotFoundError, UnauthenticatedError } from "../../shared/api/errors.ts";
import { toErrorResponse } from "../../shared/api/error-response.ts";
import type { FunctionHost } from "./function-host.ts";
import { LOOPBACK } from "./loopback-port.ts";
import type { LocalRoute } from "./template-functions.ts";

/**
 * API Gateway, locally: the stack's routes served on 127.0.0.1, each request checked for the bearer
 * token (`Authorization: Bearer <token>`, as the Databricks CLI and SDK send it) and turned into the
 * proxy event API Gateway would send the same handler.
 */

/** API Gateway refuses larger payloads (10 MB) before any handler sees them. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

export interface ApiServerOptions {
  readonly routes: readonly LocalRoute[];
  readonly host: FunctionHost;
  readonly token: string;
  /** @default a free port */
  readonly port?: number;
}

export async function serveApi(
  options: ApiServerOptions,
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const routes = options.routes.map((route) => ({ ...route, pattern: routePattern(route.path) }));
  const server = http.createServer((request, response) => {
    void handle(request).then((result) => {
      response.writeHead(result.statusCode, result.headers as http.OutgoingHttpHeaders);
      response.end(result.body);
    });
  });

  async function handle(request: http.IncomingMessage): Promise<APIGatewayProxyResult> {
    try {
      if (!authorized(request.headers.authorization, options.token)) {
        throw new UnauthenticatedError("send Authorization: Bearer $EBB_TOKEN (printed by npm start)");
      }
      const url = new URL(request.url ?? "/", "http://local");
      const method = request.method ?? "GET";
      const matches = routes
        .map((route) => ({ route, params: route.pattern.exec(url.pathname) }))
        .filter((m) => m.params);
      const match = matches.find((m) => m.route.method === method);
      if (!match?.params) throw new RouteNotFoundError(method, url.pathname);
      const body = await readBody(request);
      if (body === undefined)
        return reply(413, { error_code: "REQUEST_LIMIT_EXCEEDED", message: "the body is over 10 MB" });
      const event = proxyEvent(request, url, match.route, match.params.groups ?? {}, body);
      return (await options.host.invoke(match.route.functionId, event)) as APIGatewayProxyResult;
    } catch (error) {
      const { status, body } = toErrorResponse(error);
      if (status >= 500) console.error(error);
      return reply(status, body);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, LOOPBACK, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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

function authorized(header: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(header ?? "")?.[1] ?? "";
  return given.length === token.length && timingSafeEqual(Buffer.from(given), Buffer.from(token));
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
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
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
