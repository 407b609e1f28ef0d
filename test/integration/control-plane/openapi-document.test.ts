import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSynthesizedEbb } from "../../../infra/local/ebb-synthesis-cache.ts";
import { templateRoutes } from "../../../infra/local/template-functions.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * The OpenAPI document the API serves, against the API itself: every route the stack synthesizes is
 * documented and every documented operation is synthesized, with the same path parameters; and the
 * query parameters and body fields each handler accepts (as its own refusal of an unknown field lists
 * them; the query is checked first) are exactly the ones documented.
 */

interface Operation {
  parameters?: { name: string; in: string; required: boolean }[];
  requestBody?: { content: { "application/json": { schema: { properties?: Record<string, unknown> } } } };
  responses: { "200": { content: { "application/json": { schema: SuccessSchema } } } };
}
interface SuccessSchema {
  properties?: Record<string, unknown>;
  additionalProperties?: unknown;
  anyOf?: SuccessSchema[];
}
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

const PROBE = "ebb_undocumented";

describe("the OpenAPI document", () => {
  let cp: TestControlPlane;
  let document: Document;
  let routes: { method: string; path: string }[];
  const operations = () =>
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        operation,
      })),
    );
  const send = (method: string, path: string, body?: string) =>
    fetch(cp.plane.endpoint + path, {
      method,
      headers: { authorization: `Bearer ${cp.plane.token}`, "content-type": "application/json" },
      ...(body !== undefined ? { body } : {}),
    });
  /** Any value in each path parameter: fields are checked before the parameters are. */
  const concrete = (path: string) => path.replace(/\{(\w+)\}/g, "x");
  /** The names an unknown-field refusal lists as allowed (none: []). */
  const allowedIn = async (response: Response): Promise<string[]> => {
    expect(response.status).toBe(400);
    const { error_code, message } = (await response.json()) as { error_code: string; message: string };
    expect(error_code).toBe("INVALID_PARAMETER_VALUE");
    expect(message).toContain(`unknown field "${PROBE}"`);
    if (message.endsWith("none are allowed here")) return [];
    return (/allowed here: (.*)$/.exec(message)?.[1] ?? "").split(", ").sort();
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    routes = templateRoutes((await loadSynthesizedEbb()).template);
    const response = await send("GET", "/api/2.0/openapi.json");
    expect(response.status).toBe(200);
    document = (await response.json()) as Document;
  });
  afterAll(() => cp?.close());

  it("is OpenAPI 3.1, served with the same bearer token as every route", async () => {
    expect(document.openapi).toBe("3.1.0");
    const anonymous = await fetch(`${cp.plane.endpoint}/api/2.0/openapi.json`);
    expect(anonymous.status).toBe(401);
  });

  it("documents exactly the routes the stack synthesizes, with their path parameters", () => {
    const documented = operations().map(({ method, path }) => `${method} ${path}`);
    expect(documented.sort()).toEqual(routes.map(({ method, path }) => `${method} ${path}`).sort());
    for (const { path, operation } of operations()) {
      const inPath = (operation.parameters ?? []).filter((p) => p.in === "path");
      expect(inPath.map((p) => p.name)).toEqual([...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
      for (const parameter of inPath) expect(parameter.required).toBe(true);
    }
  });

  it("documents the query parameters each handler takes", async () => {
    for (const { method, path, operation } of operations()) {
      const documented = (operation.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      const served = await allowedIn(await send(method, `${concrete(path)}?${PROBE}=1`));
      expect(served, `${method} ${path}`).toEqual(documented.sort());
    }
  });

  it("documents the body fields each handler takes, and no body where it takes none", async () => {
    for (const { method, path, operation } of operations()) {
      if (method !== "POST" && method !== "PUT") {
        expect(operation.requestBody, `${method} ${path}`).toBeUndefined();
        continue;
      }
      const schema = operation.requestBody?.content["application/json"].schema;
      const documented = Object.keys(schema?.properties ?? {}).sort();
      const served = await allowedIn(await send(method, concrete(path), JSON.stringify({ [PROBE]: 1 })));
      expect(served, `${method} ${path}`).toEqual(documented);
    }
  });

  it("describes every operation's success body, field by field (response-schemas.ts)", () => {
    for (const { method, path, operation } of operations()) {
      if (path === "/api/2.0/openapi.json") continue; // the document itself: OpenAPI's own schema
      const schema = operation.responses["200"].content["application/json"].schema;
      for (const shape of schema.anyOf ?? [schema]) {
        expect(shape.additionalProperties, `${method} ${path}`).toBe(false);
        expect(shape.properties, `${method} ${path}`).toBeDefined();
      }
    }
    const update = document.paths["/api/2.0/pipelines/{pipeline_id}/updates/{update_id}"]!["get"]!;
    const body = update.responses["200"].content["application/json"].schema;
    expect(Object.keys((body.properties!["update"] as SuccessSchema).properties!)).toContain("progress");
  });
});
