import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";
import { BAD_SQL, FIXED_SQL, seedDefinition } from "../../support/seed-scenario.ts";

/**
 * The seed's incident through Ebb's MCP server only, as an assistant would work it: the MCP SDK's own
 * client over streamable HTTP on the local runtime (and over stdio, `ebb mcp`), the guard rails of a
 * rewind (a plan of this session, an explicit confirmation), and refusals carrying the API's codes.
 */

const REPO = path.resolve(import.meta.dirname, "../../..");
const ROOT = "mcp.incident.table";

describe("Ebb's MCP server", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  let mcp: Client;

  const connectHttp = async () => {
    const client = new Client({ name: "ebb-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${cp.plane.endpoint}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${cp.plane.token}` } },
      }),
    );
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = (result: CallToolResult) =>
    result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "mcp incident",
      catalog: "mcp",
      schema: "incident",
      configuration: { "pipelines.rewind.betaEnabled": "true" },
      definition: seedDefinition(cp.landing, BAD_SQL),
    }));
    await cp.land(
      "good.json",
      [1, 2, 3].map((id) => ({ id, amount: id * 10 })),
    );
    expect((await run()).state).toBe("COMPLETED");
    // The onset's rewind timestamp falls between the good and the bad commit, to the second.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await cp.land(
      "bad.json",
      [4, 5].map((id) => ({ id, amount: -1000 })),
    );
    expect((await run()).state).toBe("COMPLETED");
    mcp = await connectHttp();
  });
  afterAll(async () => {
    await mcp?.close();
    if (pipelineId) await cp.client.deletePipeline(pipelineId, true);
    await cp?.close();
  });

  it("lists its tools with input schemas, read-only and destructive hints", async () => {
    const { tools } = await mcp.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining([
        "list_pipelines",
        "describe_pipeline",
        "list_updates",
        "get_update",
        "list_events",
        "list_rewind_points",
        "find_onset",
        "query_table",
        "plan_rewind",
        "rewind",
        "start_update",
        "refresh_datasets",
        "vacuum_table",
        "delete_pipeline",
      ]),
    );
    expect(byName.get("find_onset")!.inputSchema).toMatchObject({
      type: "object",
      properties: { table: { type: "string" }, predicate: { type: "string" } },
      required: expect.arrayContaining(["table", "predicate"]),
    });
    for (const name of ["rewind", "refresh_datasets", "vacuum_table", "delete_pipeline"])
      expect(byName.get(name)!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    for (const name of [
      "list_pipelines",
      "describe_pipeline",
      "find_onset",
      "query_table",
      "list_rewind_points",
    ])
      expect(byName.get(name)!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it("works the seed's incident through tools alone: onset, plan, confirm, rewind, replay", async () => {
    const graph = await call(mcp, "describe_pipeline", { pipeline_id: pipelineId });
    expect(text(graph)).toContain("mcp.incident.clean");

    const onset = await call(mcp, "find_onset", { table: ROOT, predicate: "amount < 0" });
    expect(onset.isError).toBeFalsy();
    expect(onset.structuredContent).toMatchObject({
      found: true,
      first_bad_version: 2,
      last_good_version: 1,
    });
    const point = (onset.structuredContent as { rewind_point: { rewind_point_id: string } }).rewind_point;
    expect(text(onset)).toContain(point.rewind_point_id);

    const planned = await call(mcp, "plan_rewind", {
      pipeline_id: pipelineId,
      rewind_point_id: point.rewind_point_id,
    });
    expect(planned.isError).toBeFalsy();
    const plan = planned.structuredContent as {
      plan_id: string;
      datasets: { identifier: string; targetVersion: number; undo: { inserted: number } }[];
    };
    // The plan takes back the two bad rows from each streaming table; nothing changed yet.
    expect(plan.datasets.find((d) => d.identifier === ROOT)).toMatchObject({
      targetVersion: 1,
      undo: { inserted: 2 },
    });
    expect(plan.datasets.find((d) => d.identifier === "mcp.incident.clean")?.undo.inserted).toBe(2);
    expect(text(planned)).toMatch(/2 inserted/);
    expect((await cp.client.query("mcp.incident.totals")).rows).toEqual([{ orders: 5, amount: -1940 }]);

    // The guard rails: no confirmation, a plan of another session, a plan that does not exist.
    const unconfirmed = await call(mcp, "rewind", { plan_id: plan.plan_id });
    expect(unconfirmed).toMatchObject({
      isError: true,
      structuredContent: { error_code: "CONFIRMATION_REQUIRED" },
    });
    const other = await connectHttp();
    try {
      const elsewhere = await call(other, "rewind", { plan_id: plan.plan_id, confirm: true });
      expect(elsewhere).toMatchObject({
        isError: true,
        structuredContent: { error_code: "REWIND_NOT_PLANNED" },
      });
    } finally {
      await other.close();
    }
    expect((await cp.client.query("mcp.incident.totals")).rows).toEqual([{ orders: 5, amount: -1940 }]);

    const rewound = await call(mcp, "rewind", { plan_id: plan.plan_id, confirm: true });
    expect(rewound.isError).toBeFalsy();
    expect((await cp.client.query("mcp.incident.totals")).rows).toEqual([{ orders: 3, amount: 60 }]);
    // A plan runs once.
    const again = await call(mcp, "rewind", { plan_id: plan.plan_id, confirm: true });
    expect(again.structuredContent).toMatchObject({ error_code: "REWIND_NOT_PLANNED" });

    // The person deploys the fix; the assistant replays and checks.
    await cp.client.editPipeline(pipelineId, { definition: seedDefinition(cp.landing, FIXED_SQL) });
    const started = await call(mcp, "start_update", { pipeline_id: pipelineId });
    const { update_id } = started.structuredContent as { update_id: string };
    const followed = await call(mcp, "get_update", {
      pipeline_id: pipelineId,
      update_id,
      wait_seconds: 120,
    });
    expect(followed.structuredContent).toMatchObject({ update: { state: "COMPLETED" } });
    const checked = await call(mcp, "query_table", {
      table: "mcp.incident.clean",
      sql: "SELECT count(*) AS bad FROM t WHERE amount < 0",
    });
    expect(checked.structuredContent).toMatchObject({ rows: [{ bad: 0 }] });
    // Equal to the fixed pipeline run from scratch: the good rows once, the bad ones filtered.
    expect((await cp.client.query("mcp.incident.totals")).rows).toEqual([{ orders: 3, amount: 60 }]);
    expect((await cp.client.query(ROOT, { sql: "SELECT count(*) AS n FROM t" })).rows).toEqual([{ n: 5 }]);
  });

  it("refuses a bad argument with the API's own code and message", async () => {
    const args = { predicate: "no_such_column < 0" };
    const direct = await cp.client.onset(ROOT, args).catch((error: unknown) => error);
    expect(direct).toBeInstanceOf(EbbApiError);
    const refused = await call(mcp, "find_onset", { table: ROOT, ...args });
    expect(refused).toMatchObject({
      isError: true,
      structuredContent: {
        error_code: (direct as EbbApiError).errorCode,
        message: (direct as EbbApiError).message,
      },
    });
    const missing = "00000000-0000-4000-8000-000000000000";
    const noPipeline = await call(mcp, "plan_rewind", {
      pipeline_id: missing,
      rewind_timestamp: "2026-01-01T00:00:00Z",
    });
    const directMissing = await cp.client.datasets(missing).catch((error: unknown) => error);
    expect(noPipeline).toMatchObject({
      isError: true,
      structuredContent: { error_code: (directMissing as EbbApiError).errorCode },
    });
    const destructive = await call(mcp, "delete_pipeline", { pipeline_id: pipelineId });
    expect(destructive.structuredContent).toMatchObject({ error_code: "CONFIRMATION_REQUIRED" });
    expect((await cp.client.getPipeline(pipelineId))["pipeline_id"]).toBe(pipelineId);
  });

  it("serves the definition and graph as resources and the incident prompt", async () => {
    const { resources } = await mcp.listResources();
    expect(resources.map((r) => r.uri)).toContain(`ebb://pipelines/${pipelineId}/graph`);
    const definition = await mcp.readResource({ uri: `ebb://pipelines/${pipelineId}/definition` });
    expect(JSON.parse((definition.contents[0] as { text: string }).text)).toMatchObject({
      name: "mcp incident",
    });
    const prompt = await mcp.getPrompt({
      name: "investigate_and_rewind",
      arguments: { pipeline_id: pipelineId, incident: "negative amounts in totals" },
    });
    expect(JSON.stringify(prompt.messages)).toContain("find_onset");
  });

  it("refuses an MCP request without the token", async () => {
    const response = await fetch(`${cp.plane.endpoint}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
  });

  it("serves the same tools over stdio (`ebb mcp`)", async () => {
    const client = new Client({ name: "ebb-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          path.join(REPO, "shared/cli/ebb.mjs"),
          "mcp",
          "--endpoint",
          cp.plane.endpoint,
          "--token",
          cp.plane.token,
        ],
        cwd: REPO,
        stderr: "pipe",
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("plan_rewind");
      const listed = (await client.callTool({ name: "list_pipelines", arguments: {} })) as CallToolResult;
      expect(text(listed)).toContain(pipelineId);
    } finally {
      await client.close();
    }
  });
});
