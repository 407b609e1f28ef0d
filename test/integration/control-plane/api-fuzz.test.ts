import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadSynthesizedEbb } from "../../../infra/local/ebb-synthesis-cache.ts";
import { templateRoutes } from "../../../infra/local/template-functions.ts";
import * as requestSchemas from "../../../shared/api/request-schemas.ts";
import { ingestPipeline, startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Every route of the synthesized API, fed generated bodies, query strings and path parameters over
 * HTTP on the local runtime: never a 5xx, every refusal `{error_code, message}`, and a refused request
 * to a pipeline changes nothing about it. Field names come from the request schemas (so many cases
 * get past the first check), values from anything JSON can hold plus the review's edge cases.
 */

/** `EBB_FUZZ_RUNS` raises it for a long fuzzing session; CI keeps the default. */
const RUNS_PER_ROUTE = Number(process.env["EBB_FUZZ_RUNS"] ?? 25);

/** Every field name any request schema knows, at any depth. */
function fieldNames(): string[] {
  const names = new Set<string>();
  const walk = (schema: unknown): void => {
    if (typeof schema !== "object" || schema === null) return;
    const node = schema as Record<string, unknown>;
    if (node["properties"] && typeof node["properties"] === "object")
      for (const name of Object.keys(node["properties"])) names.add(name);
    for (const value of Object.values(node)) walk(value);
  };
  for (const value of Object.values(requestSchemas)) {
    if (!(value instanceof z.ZodType)) continue;
    try {
      walk(z.toJSONSchema(value, { unrepresentable: "any", io: "input" }));
    } catch {
      // A schema JSON Schema cannot describe (transforms): its fields come in through the others.
    }
  }
  return [...names];
}

const EDGE_STRINGS = [
  "",
  "0",
  "-1",
  "1e3",
  "0x10",
  "NaN",
  "true",
  "x".repeat(3_000),
  "\u0000",
  "é",
  "../..",
  "%zz",
];

describe("API fuzz", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  let routes: { method: string; path: string }[];
  let cases = 0;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    routes = templateRoutes((await loadSynthesizedEbb()).template);
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline(
      ingestPipeline({ name: "fuzzed", catalog: "fuzz", schema: "api", path: cp.landing }),
    ));
  });
  afterAll(async () => {
    console.log(`API fuzz: ${cases} requests over ${routes?.length ?? 0} routes`);
    await cp?.close();
  });

  const names = fieldNames();
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(...EDGE_STRINGS));
  const body = fc.oneof(
    fc
      .dictionary(fc.oneof(fc.constantFrom(...names), fc.string()), value, { maxKeys: 5 })
      .map((o) => JSON.stringify(o)),
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    fc.constantFrom("", "{", "null", "[]", '{"a":1}{', "\u0000"),
  );
  const query = fc.dictionary(
    fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 })),
    fc.oneof(fc.constantFrom(...EDGE_STRINGS), fc.string({ maxLength: 20 })),
    { maxKeys: 3 },
  );

  it(
    "answers every generated request below 500 with {error_code, message} on refusal",
    async () => {
      for (const route of routes) {
        const mutates = route.method !== "GET";
        // Never the real pipeline for DELETE, so the other routes keep finding it.
        const pipeline =
          route.method === "DELETE"
            ? fc.oneof(fc.string(), fc.constantFrom(...EDGE_STRINGS))
            : fc.oneof(fc.constant(pipelineId), fc.string(), fc.constantFrom(...EDGE_STRINGS));
        const param = fc.oneof(fc.constant("fuzz.api.raw"), fc.string(), fc.constantFrom(...EDGE_STRINGS));
        await fc.assert(
          fc.asyncProperty(pipeline, param, query, body, async (id, other, parameters, text) => {
            cases++;
            const path = route.path
              .replace("{pipeline_id}", encodeURIComponent(id))
              .replace(/\{[a-z_]+\}/g, encodeURIComponent(other));
            const search = new URLSearchParams(Object.entries(parameters)).toString();
            const before = mutates && id === pipelineId ? await pipelineState() : undefined;
            const response = await fetch(`${cp.plane.endpoint}${path}${search ? `?${search}` : ""}`, {
              method: route.method,
              headers: { authorization: `Bearer ${cp.plane.token}`, "content-type": "application/json" },
              ...(route.method === "GET" ? {} : { body: text }),
            });
            const answer = await response.text();
            const where = `${route.method} ${path}?${search} ${text.slice(0, 200)} → ${response.status} ${answer.slice(0, 300)}`;
            expect(response.status, where).toBeLessThan(500);
            if (response.status >= 400) {
              const error = JSON.parse(answer) as Record<string, unknown>;
              expect(typeof error["error_code"], where).toBe("string");
              expect(typeof error["message"], where).toBe("string");
              if (before !== undefined) expect(await pipelineState(), where).toEqual(before);
            }
          }),
          { numRuns: RUNS_PER_ROUTE },
        );
      }
    },
    24_000 * RUNS_PER_ROUTE,
  );

  /** What a refused request must leave alone: the definition version, name and state. */
  async function pipelineState() {
    const pipeline = await cp.client.getPipeline(pipelineId);
    return { spec: pipeline.spec, name: pipeline.name };
  }
});
