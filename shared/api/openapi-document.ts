import { z } from "zod";
import { PATH_PARAMETERS } from "./resource-names.ts";
import { ROUTES, pathParameters, type RouteContract } from "./route-contracts.ts";

/**
 * The API's OpenAPI 3.1 document, generated from the route contracts (route-contracts.ts) with zod's
 * own JSON Schema export: the schemas that validate a request are the ones documented, so the two
 * cannot drift. Bodies and queries are documented as the client sends them (`io: "input"`: before
 * defaults and coercion), and every success body as the handler answers it (response-schemas.ts).
 * Every refusal is `{error_code, message, request_id}` (error-response.ts).
 */

type JsonSchema = Record<string, unknown>;

const ERROR_BODY: JsonSchema = {
  type: "object",
  properties: {
    error_code: { type: "string" },
    message: { type: "string" },
    // The handler adds it (functions/http/api-route.ts), as it does the `x-request-id` header.
    request_id: { type: "string", description: "The request's id in Ebb's log" },
  },
  required: ["error_code", "message"],
};

/** Methods whose request may carry a body (a GET or DELETE sends none). */
const WITH_BODY = new Set(["POST", "PUT"]);

export function openApiDocument(): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [name, route] of Object.entries(ROUTES) as [string, RouteContract][]) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(name, route);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Ebb API",
      version: "2.0",
      description:
        "Declarative data pipelines with rewind and replay over Delta Lake. Unknown fields and query parameters are refused; every error answers {error_code, message}.",
    },
    paths,
    components: {
      schemas: { Error: ERROR_BODY },
      securitySchemes: {
        bearerToken: {
          type: "http",
          scheme: "bearer",
          description: "The local runtime: the token `npm start` wrote (EBB_TOKEN).",
        },
        awsSigV4: {
          type: "apiKey",
          in: "header",
          name: "Authorization",
          description: "AWS: a request signed with SigV4 by an IAM principal allowed to invoke the API.",
        },
      },
    },
    security: [{ bearerToken: [] }, { awsSigV4: [] }],
  };
}

function operation(operationId: string, route: RouteContract): Record<string, unknown> {
  const query = jsonSchema(route.query);
  const queryProperties = (query["properties"] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((query["required"] ?? []) as string[]);
  const parameters = [
    ...pathParameters(route.path).map((name) => ({
      name,
      in: "path",
      required: true,
      ...PATH_PARAMETERS[name],
    })),
    ...Object.entries(queryProperties).map(([name, schema]) => ({
      name,
      in: "query",
      required: required.has(name),
      schema,
    })),
  ];
  return {
    operationId,
    summary: route.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(WITH_BODY.has(route.method)
      ? {
          requestBody: {
            required: false,
            content: { "application/json": { schema: jsonSchema(route.body) } },
          },
        }
      : {}),
    responses: {
      "200": {
        description: "OK",
        content: { "application/json": { schema: jsonSchema(route.response, "output") } },
      },
      default: {
        description: "Refused or failed: the error's code and what to do",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      },
    },
  };
}

/**
 * A schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), inlined: a request as the client sends it
 * (`input`), a response as the handler answers it (`output`).
 */
function jsonSchema(schema: z.ZodType, io: "input" | "output" = "input"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io,
    unrepresentable: "any",
    reused: "inline",
  }) as JsonSchema;
  return rest;
}
