import middy from "@middy/core";
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import type { z } from "zod";
import { toErrorResponse } from "../../shared/api/error-response.ts";
import { parseWith, readJsonBody } from "../../shared/api/request-body.ts";
import type { ControlPlane } from "../../shared/control/plane/control-plane.ts";
import { controlPlane } from "../runtime/control-plane-from-env.ts";
import { logger } from "../runtime/ebb-logger.ts";
import { traceHandler } from "../runtime/ebb-tracer.ts";
import { requestMetricsOf, type RequestOutcome } from "../../shared/control/metrics/request-metrics.ts";

/**
 * One API route as a Lambda handler behind API Gateway's proxy integration (api.md): the query string
 * checked against the route's strict schema, the body read (1 MiB, JSON object) and checked likewise, the
 * route's function called with the control plane, and any error answered as
 * `{"error_code", "message", "request_id"}` with its status. Every request is one JSON log line
 * (`request_id`, route, status, duration, pipeline and update ids, error code) and its answer carries
 * the same id in `x-request-id`, so a caller's report finds its line; errors that are not the caller's
 * are logged with their stack.
 */

export interface RouteRequest<Body, Query> {
  /** Path parameters, undecoded as API Gateway gives them (`{pipeline_id}`, `{update_id}`, `{full_name}`). */
  readonly path: Readonly<Record<string, string | undefined>>;
  readonly body: Body;
  readonly query: Query;
}

/** A route's contract (route-contracts.ts) gives all three. */
export interface RouteSchemas<Body extends z.ZodType, Query extends z.ZodType, Response extends z.ZodType> {
  /** `emptyBody` for routes without one (GET, DELETE): any field sent is then refused. */
  readonly body: Body;
  readonly query: Query;
  /** The success body: the route's function must answer it (response-schemas.ts). */
  readonly response: Response;
}

/** A success body as a route may build it: the schema's shape, its arrays and fields possibly read-only. */
export type Answer<T> = T extends readonly (infer Item)[]
  ? readonly Answer<Item>[]
  : T extends object
    ? { readonly [Field in keyof T]: Answer<T[Field]> }
    : T;

export type ApiHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

export function apiRoute<Body extends z.ZodType, Query extends z.ZodType, Response extends z.ZodType>(
  schemas: RouteSchemas<Body, Query, Response>,
  route: (
    request: RouteRequest<z.infer<Body>, z.infer<Query>>,
    plane: ControlPlane,
  ) => Promise<Answer<z.infer<Response>>>,
  plane: () => ControlPlane = controlPlane,
): middy.MiddyfiedHandler<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(traceHandler())
    .handler(async (event, context) => {
      const started = Date.now();
      // API Gateway's id for the request (the local runtime makes one too), else the invocation's.
      const requestId = event.requestContext?.requestId || context.awsRequestId;
      const path = decodedPath(event.pathParameters ?? {});
      let result: APIGatewayProxyResult;
      let errorCode: string | undefined;
      try {
        const query = parseWith(schemas.query, queryOf(event));
        const body = parseWith(
          schemas.body,
          readJsonBody(event.body, event.isBase64Encoded, headerOf(event, "content-type")),
        );
        result = json(200, await route({ path, body, query }, plane()));
      } catch (error) {
        const { status, body } = toErrorResponse(error);
        errorCode = body.error_code;
        if (status >= 500)
          logger.error("request failed", { request_id: requestId, path: event.path, error: describe(error) });
        result = json(
          status,
          { ...body, request_id: requestId },
          status === 503 ? { "retry-after": String(RETRY_AFTER_SECONDS) } : {},
        );
      }
      result.headers = { ...result.headers, [REQUEST_ID_HEADER]: requestId };
      const durationMs = Date.now() - started;
      logger.info("request", {
        request_id: requestId,
        method: event.httpMethod,
        route: event.resource,
        status: result.statusCode,
        duration_ms: durationMs,
        pipeline_id: path["pipeline_id"],
        update_id: path["update_id"],
        error_code: errorCode,
      });
      countRequest(plane, {
        method: event.httpMethod,
        route: event.resource,
        status: result.statusCode,
        durationMs,
        errorCode,
        requestId,
      });
      return result;
    });
}

/** The request's metrics (request-metrics.ts); a plane that cannot be made has none to give. */
function countRequest(plane: () => ControlPlane, outcome: RequestOutcome): void {
  try {
    plane().metrics?.record(requestMetricsOf(outcome));
  } catch {
    // The answer stands without its metrics (a function deployed without its resources says so itself).
  }
}

/** The response header that names the request, as its log line and error body do. */
export const REQUEST_ID_HEADER = "x-request-id";

/** What a 503 tells the caller to wait: about one round of the AWS calls' bounded retries. */
const RETRY_AFTER_SECONDS = 5;

/** A request header by its lower-case name (API Gateway keeps the client's spelling). */
function headerOf(event: APIGatewayProxyEvent, name: string): string | undefined {
  const found = Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name);
  return found?.[1];
}

/** Single values as strings; a parameter given several times as a list. */
function queryOf(event: APIGatewayProxyEvent): Record<string, string | string[]> {
  const query = Object.create(null) as Record<string, string | string[]>;
  const multi = event.multiValueQueryStringParameters ?? {};
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value === undefined) continue;
    const all = Object.hasOwn(multi, name) ? multi[name] : undefined;
    query[name] = all && all.length > 1 ? all : value;
  }
  return query;
}

/** API Gateway passes path parameters percent-encoded; a bad encoding is left as is (and refused later). */
function decodedPath(parameters: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(parameters).map(([name, value]) => {
      try {
        return [name, value === undefined ? undefined : decodeURIComponent(value)];
      } catch {
        return [name, value];
      }
    }),
  );
}

function json(
  statusCode: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  };
}

function describe(error: unknown): unknown {
  return error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack }
    : String(error);
}
