import type { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTES, type RouteName } from "../../../shared/api/route-contracts.ts";
import { TERMINAL_STATES } from "../../../shared/client/ebb-client.ts";
import { testAws } from "../../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Every route's real answer against its response schema (response-schemas.ts), which the OpenAPI
 * document and the client's types come from: each route is driven once (some twice, for their other
 * shape) on the local control plane and its body parsed with the strict schema, so a field a handler
 * adds, drops or misspells fails here rather than in a user's client.
 */

const SCHEMA = `contract${Date.now().toString(36)}`;

describe("every route's answer matches its response schema", () => {
  let cp: TestControlPlane;
  const driven = new Set<RouteName>();
  /** Sends the request raw (not through the client, whose types come from the schemas under test). */
  const call = async <Name extends RouteName>(
    name: Name,
    params: Record<string, string> = {},
    options: { query?: Record<string, string>; body?: unknown } = {},
  ): Promise<z.infer<(typeof ROUTES)[Name]["response"]>> => {
    const route = ROUTES[name];
    const path = route.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(params[p]!));
    const url = new URL(cp.plane.endpoint + path);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
    const response = await fetch(url, {
      method: route.method,
      headers: { authorization: `Bearer ${cp.plane.token}`, "content-type": "application/json" },
      ...(route.method === "POST" || route.method === "PUT"
        ? { body: JSON.stringify(options.body ?? {}) }
        : {}),
    });
    const json = (await response.json()) as Record<string, unknown>;
    expect(response.status, `${name}: ${JSON.stringify(json)}`).toBe(200);
    const parsed = route.response.safeParse(json);
    expect(parsed.error?.issues ?? [], `${name} answered ${JSON.stringify(json).slice(0, 2000)}`).toEqual([]);
    driven.add(name);
    return parsed.data as z.infer<(typeof ROUTES)[Name]["response"]>;
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  it("on every route", async () => {
    const definition = (schema: string, upstream?: string) => ({
      name: `contract ${schema}`,
      catalog: "contract",
      schema,
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: {
        datasets: upstream
          ? [
              {
                type: "streaming_table",
                name: "copied",
                flows: [
                  { name: "copy", source: { type: "delta", path: upstream }, sql: "SELECT id FROM source" },
                ],
              },
            ]
          : [
              {
                type: "streaming_table",
                name: "clicks",
                flows: [
                  {
                    name: "dedup",
                    source: {
                      type: "auto_loader",
                      path: cp.landing,
                      format: "json",
                      schema: { id: "BIGINT", ts: "TIMESTAMP" },
                    },
                    watermark: { column: "ts", delay: "1 hour" },
                    drop_duplicates: { keys: ["id"] },
                    sql: "SELECT id, ts FROM source",
                  },
                ],
              },
            ],
      },
    });
    await cp.land("1.json", [
      { id: 1, ts: "2026-01-01T10:00:00Z" },
      { id: 2, ts: "2026-01-01T11:00:00Z" },
    ]);
    const create = async (body: unknown) => {
      const created = await call("createPipeline", {}, { body });
      if (!("pipeline_id" in created)) throw new Error("create answered a dry run's settings");
      return created.pipeline_id;
    };
    const up = await create(definition(SCHEMA));
    const table = `contract.${SCHEMA}.clicks`;
    const upstreamUri = `s3://${testAws().storage.bucket}/tables/contract/${SCHEMA}/clicks`;
    const down = await create(definition(`${SCHEMA}d`, upstreamUri));
    await call("createPipeline", {}, { body: { ...definition(`${SCHEMA}x`), dry_run: true } });
    for (const id of [up, down]) {
      const started = await call("startUpdate", { pipeline_id: id });
      if (!("update_id" in started)) throw new Error("start answered a branch");
      const { update_id } = started;
      await cp.client.waitForUpdate(id, update_id, { intervalMs: 200 });
      await call("getUpdate", { pipeline_id: id, update_id: update_id });
    }
    await call("startUpdate", { pipeline_id: up }, { body: { validate_only: true } });
    await call("listPipelines");
    await call("listPipelines", {}, { query: { max_results: "1" } });
    await call("getPipeline", { pipeline_id: up });
    await call("editPipeline", { pipeline_id: down }, { body: definition(`${SCHEMA}d`, upstreamUri) });
    await call("listUpdates", { pipeline_id: up });
    await call("listEvents", { pipeline_id: up });
    await call("listDatasets", { pipeline_id: up });
    await call("listDatasets", { pipeline_id: down });
    const point = await call("captureRewindPoint", { pipeline_id: up });
    await call("listRewindPoints", { pipeline_id: up });
    const branched = {
      body: { rewind_spec: { rewind_point_id: point.rewind_point_id, branch: "contract" } },
    };
    await call("startUpdate", { pipeline_id: up }, branched);
    await call("listBranches", { pipeline_id: up });
    await call("getBranch", { pipeline_id: up, branch_name: "contract" });
    await call("branchDiff", { pipeline_id: up, branch_name: "contract" });
    // The branch is at a point captured just now: its publish restores live's rows as they are (a
    // new version of up's table, which down's next run reads).
    const published = await call("publishBranch", { pipeline_id: up, branch_name: "contract" });
    // A publish is an update: the pipeline is free again once it completes.
    await cp.client.waitForUpdate(up, published.update_id, { intervalMs: 200 });
    await call("discardBranch", { pipeline_id: up, branch_name: "contract" });
    await call("getFlowState", { pipeline_id: up, flow_name: "dedup" });
    await call("getTableHistory", { full_name: table });
    await call("listTableChanges", { full_name: table });
    await call("queryTable", { full_name: table });
    await call("vacuumTable", { full_name: table }, { body: { dry_run: true } });
    await call("findOnset", { full_name: table }, { body: { predicate: "id = 2" } });
    await call("optimizeTable", { full_name: table }, { body: { dry_run: true } });
    await call("optimizeTable", { full_name: table }, { body: {} });
    const statement = await call("executeStatement", {}, { body: { statement: `SELECT * FROM ${table}` } });
    await call(
      "executeStatement",
      {},
      { body: { statement: `SELECT * FROM ${table}`, wait_timeout: "10s" } },
    );
    await call("getStatement", { statement_id: statement.statement_id });
    await call("getStatementResultChunk", { statement_id: statement.statement_id, chunk_index: "0" });
    await call("cancelStatement", { statement_id: statement.statement_id });
    await call("getOpenApi");
    await call(
      "rewindToCut",
      {},
      { body: { pipeline_ids: [up, down], rewind_point_id: point.rewind_point_id, dry_run: true } },
    );
    await call("startOrderedRun", {}, { body: { pipeline_ids: [up, down], dry_run: true } });
    const ordered = await call("startOrderedRun", {}, { body: { pipeline_ids: [up, down] } });
    await call("stopPipeline", { pipeline_id: up });
    // The stop may come after up's run completed: its FinishUpdate then starts down's run just after
    // up's update shows COMPLETED, so wait for up's to end, then for down's, if it was started.
    const first = ordered.pipelines.find((p) => p.pipeline_id === up)!.update_id!;
    const upRun = await cp.client.waitForUpdate(up, first, { intervalMs: 200 });
    if (upRun.state === "COMPLETED") {
      for (let waited = 0; ; waited++) {
        const { updates } = await cp.client.listUpdates(down);
        const downRun = updates.find((u) => u.ordered_run?.request_id === ordered.request_id);
        if (downRun && TERMINAL_STATES.includes(downRun.state)) break;
        expect(waited, "the ordered run's update of down ends").toBeLessThan(240);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    await call("deletePipeline", { pipeline_id: down });
    await call("deletePipeline", { pipeline_id: up }, { query: { purge: "true" } });
  });

  it("covers every route of the contracts", () => {
    expect([...driven].sort()).toEqual(Object.keys(ROUTES).sort());
  });
});
