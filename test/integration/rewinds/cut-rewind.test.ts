import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../shared/cli/main.ts";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { testAws } from "../../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Three pipelines in a chain, each reading the one before's table as a delta source, rewound to one
 * cut through POST /api/2.0/ebb/rewinds (docs/rewind-across-pipelines.md).
 */

let cp: TestControlPlane;
/** The lifecycle events the runtime POSTed to a local webhook (docs/events.md). */
const delivered: { "detail-type": string; detail: { update_id: string; cut_id?: string | null } }[] = [];
let webhook: Server;
beforeAll(async () => {
  webhook = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      delivered.push(JSON.parse(body) as (typeof delivered)[number]);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => webhook.listen(0, "127.0.0.1", resolve));
  const { port } = webhook.address() as AddressInfo;
  cp = await startTestControlPlane({ webhook: `http://127.0.0.1:${port}/` });
});
afterAll(async () => {
  await cp?.close();
  await new Promise((resolve) => webhook?.close(resolve));
});

const CATALOG = "main";
const rewindOn = { "pipelines.rewind.enabled": "true" };

interface Chain {
  readonly ids: readonly [string, string, string];
  readonly tables: readonly [string, string, string];
}

async function createChain(middleSql = "SELECT id, id * 10 AS v FROM source"): Promise<Chain> {
  const tag = randomUUID().slice(0, 8);
  await mkdir(path.join(cp.landing, tag));
  const schemas = ["a", "b", "c"].map((s) => `cut_${tag}_${s}`) as [string, string, string];
  const tableUri = (schema: string, table: string) =>
    `s3://${testAws().storage.bucket}/tables/${CATALOG}/${schema}/${table}`;
  const a = await cp.client.createPipeline({
    name: `cut ${tag} bronze`,
    catalog: CATALOG,
    schema: schemas[0],
    configuration: rewindOn,
    definition: {
      datasets: [
        {
          type: "streaming_table",
          name: "raw",
          flows: [
            {
              name: "ingest",
              source: {
                type: "auto_loader",
                path: `${cp.landing}/${tag}/`,
                format: "json",
                schema: { id: "BIGINT" },
              },
              sql: "SELECT id FROM source",
            },
          ],
        },
      ],
    },
  });
  const reader = (name: string, schema: string, upstream: string, sql: string) =>
    cp.client.createPipeline({
      name: `cut ${tag} ${name}`,
      catalog: CATALOG,
      schema,
      configuration: rewindOn,
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name,
            flows: [{ name: `read_${name}`, source: { type: "delta", path: upstream }, sql }],
          },
        ],
      },
    });
  const b = await reader("clean", schemas[1], tableUri(schemas[0], "raw"), middleSql);
  const c = await reader(
    "scored",
    schemas[2],
    tableUri(schemas[1], "clean"),
    "SELECT id, v + 1 AS w FROM source",
  );
  return {
    ids: [a.pipeline_id, b.pipeline_id, c.pipeline_id],
    tables: [
      `${CATALOG}.${schemas[0]}.raw`,
      `${CATALOG}.${schemas[1]}.clean`,
      `${CATALOG}.${schemas[2]}.scored`,
    ],
  };
}

async function land(chain: Chain, file: string, ids: number[]): Promise<void> {
  const tag = chain.tables[0].split(".")[1]!.slice(4, 12);
  await cp.land(
    `${tag}/${file}`,
    ids.map((id) => ({ id })),
  );
}

async function runAll(chain: Chain, body: unknown = {}): Promise<void> {
  for (const id of chain.ids) await waitDone(id, (await cp.client.startUpdate(id, body)).update_id);
}

async function waitDone(pipelineId: string, updateId: string): Promise<void> {
  const update = await cp.client.waitForUpdate(pipelineId, updateId, { intervalMs: 200 });
  expect(update.state, `update ${updateId}`).toBe("COMPLETED");
}

async function ids(table: string): Promise<number[]> {
  const { rows } = await cp.client.query(table, { sql: "SELECT id FROM t ORDER BY id" });
  return rows.map((r) => Number(r["id"]));
}

async function versions(chain: Chain): Promise<number[]> {
  return Promise.all(chain.tables.map(async (t) => (await cp.client.query(t, { sql: "SELECT 1" })).version));
}

const rewinds = (body: Parameters<TestControlPlane["client"]["rewindToCut"]>[0]) =>
  cp.client.rewindToCut(body);

/** The newest update-end point of a pipeline. */
async function newestPoint(pipelineId: string): Promise<string> {
  const { rewind_points } = await cp.client.request<{
    rewind_points: { rewind_point_id: string; kind: string }[];
  }>("GET", `/api/2.0/pipelines/${pipelineId}/rewind-points`);
  return rewind_points.find((p) => p.kind !== "dry-run")!.rewind_point_id;
}

describe("POST /api/2.0/ebb/rewinds", () => {
  it("rewinds a three-pipeline chain to the upstream's point: each table as a run up to the cut, then replayed", async () => {
    const chain = await createChain();
    await land(chain, "1.json", [1, 2, 3]);
    await runAll(chain);
    const cut = await newestPoint(chain.ids[0]);
    await land(chain, "2.json", [4, 5, 6]);
    await runAll(chain);
    for (const t of chain.tables) expect(await ids(t)).toEqual([1, 2, 3, 4, 5, 6]);

    // Named in any order: the plan orders them upstreams first.
    const request = { pipeline_ids: [chain.ids[2], chain.ids[0], chain.ids[1]], rewind_point_id: cut };
    const before = await versions(chain);
    const dry = await rewinds({ ...request, dry_run: true });
    expect(dry.pipelines.map((p) => p.pipeline_id)).toEqual(chain.ids);
    expect(dry.pipelines.every((p) => p.update_id === undefined)).toBe(true);
    // Each table's version now and the version the rewind restores.
    expect(dry.pipelines.map((p) => p.datasets)).toEqual(
      chain.tables.map((t, i) => [
        { dataset: t, action: "RESTORE", version: before[i], target_version: before[i]! - 1 },
      ]),
    );
    expect(await versions(chain)).toEqual(before);

    // The CLI sends the same request and prints the same plan.
    let printed = "";
    const code = await runCli(
      [
        "rewind-cut",
        "--pipelines",
        request.pipeline_ids.join(","),
        "--point",
        cut,
        "--dry-run",
        "--json",
      ].concat(["--endpoint", cp.plane.endpoint, "--token", cp.plane.token]),
      { out: (text) => (printed += text), err: () => undefined, confirm: async () => true, width: 80 },
    );
    expect(code).toBe(0);
    expect((JSON.parse(printed) as typeof dry).pipelines.map((p) => p.rewind_point_id)).toEqual(
      dry.pipelines.map((p) => p.rewind_point_id),
    );

    const done = await rewinds(request);
    expect(done.pipelines.map((p) => p.rewind_point_id)).toEqual(dry.pipelines.map((p) => p.rewind_point_id));
    for (const p of done.pipelines) await waitDone(p.pipeline_id, p.update_id!);
    for (const t of chain.tables) expect(await ids(t), t).toEqual([1, 2, 3]);
    // Each pipeline's event log says which cut its rewind belongs to.
    for (const p of done.pipelines) {
      const { events } = await cp.client.events(p.pipeline_id, { filter: "event_type = 'create_update'" });
      const created = events.find((e) => e.origin?.update_id === p.update_id);
      expect((created?.details as { create_update?: { cut?: unknown } })?.create_update?.cut).toEqual({
        request_id: done.request_id,
      });
    }
    // And each rewind's update says it.
    for (const p of done.pipelines)
      expect((await cp.client.getUpdate(p.pipeline_id, p.update_id!)).update.cut).toEqual({
        request_id: done.request_id,
      });
    // Readers outside hear the same: each pipeline's start and completed rewind name the cut.
    for (const p of done.pipelines) {
      const deadline = Date.now() + 10_000;
      const ofUpdate = () => delivered.filter((e) => e.detail.update_id === p.update_id);
      while (!ofUpdate().some((e) => e["detail-type"] === "Rewind Completed") && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const cutIds = ofUpdate()
        .filter((e) => ["Update Started", "Rewind Completed"].includes(e["detail-type"]))
        .map((e) => e.detail.cut_id);
      expect(cutIds, p.pipeline_id).toEqual([done.request_id, done.request_id]);
    }

    // The replay, in order: named in any order, each run starts as the one before completes.
    printed = "";
    const replay = await runCli(
      ["run", "--pipelines", request.pipeline_ids.join(",")].concat([
        "--endpoint",
        cp.plane.endpoint,
        "--token",
        cp.plane.token,
      ]),
      { out: (text) => (printed += text), err: () => undefined, confirm: async () => true, width: 80 },
    );
    expect(replay, printed).toBe(0);
    expect(printed).toMatch(
      /1\/3 cut \w+ bronze COMPLETED\n2\/3 cut \w+ clean COMPLETED\n3\/3 cut \w+ scored COMPLETED/,
    );
    for (const t of chain.tables) expect(await ids(t), t).toEqual([1, 2, 3, 4, 5, 6]);
    const [last] = (await cp.client.listUpdates(chain.ids[2], { max_results: 1 })).updates;
    expect(last?.ordered_run).toMatchObject({ position: 3, of: 3 });
  });

  it("refuses the whole request when the middle pipeline's rewind is refused, changing no pipeline", async () => {
    const chain = await createChain();
    await land(chain, "1.json", [1, 2, 3]);
    await runAll(chain);
    const cut = await newestPoint(chain.ids[0]);
    await land(chain, "2.json", [4, 5]);
    await runAll(chain);
    // A full refresh of the middle pipeline: its points from before it can no longer be rewound to.
    await waitDone(
      chain.ids[1],
      (await cp.client.startUpdate(chain.ids[1], { full_refresh: true })).update_id,
    );
    const before = await versions(chain);
    const updatesBefore = await Promise.all(
      chain.ids.map(async (id) => (await cp.client.listUpdates(id)).updates.length),
    );

    const refused = await rewinds({ pipeline_ids: [...chain.ids], rewind_point_id: cut }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(EbbApiError);
    expect((refused as EbbApiError).message).toMatch(/^pipeline "cut \w+ clean"/);
    expect(await versions(chain)).toEqual(before);
    const updatesAfter = await Promise.all(
      chain.ids.map(async (id) => (await cp.client.listUpdates(id)).updates.length),
    );
    expect(updatesAfter).toEqual(updatesBefore);
  });

  it("names the pipeline with no point in the cut by its name, not its id", async () => {
    const chain = await createChain();
    const refused = await rewinds({
      pipeline_ids: [...chain.ids],
      rewind_timestamp: "2026-01-01 00:00:00",
      dry_run: true,
    }).catch((e: unknown) => e);
    expect((refused as EbbApiError).errorCode).toBe("INVALID_CUT_SPECIFICATION.NO_POINT_IN_CUT");
    expect((refused as EbbApiError).message).toMatch(/^pipeline "cut \w+ bronze" has no live rewind point/);
  });

  it("refuses unknown fields, one pipeline, and a pipeline named twice", async () => {
    const id = randomUUID();
    for (const body of [
      { pipeline_ids: [id, randomUUID()], rewind_timestamp: "2026-01-01 00:00:00", extra: 1 },
      { pipeline_ids: [id], rewind_timestamp: "2026-01-01 00:00:00" },
      { pipeline_ids: [id, id], rewind_timestamp: "2026-01-01 00:00:00" },
    ]) {
      const refused = await rewinds(body).catch((e: unknown) => e);
      expect((refused as EbbApiError).status).toBe(400);
    }
  });
});

const orderedRun = (body: unknown) =>
  cp.client.request<{
    request_id: string;
    dry_run: boolean;
    pipelines: { pipeline_id: string; position: number; update_id?: string }[];
  }>("POST", "/api/2.0/ebb/runs", { body });

describe("POST /api/2.0/ebb/runs", () => {
  it("ends at a run that fails: the pipelines after it do not run, and its event log names them", async () => {
    const chain = await createChain("SELECT id, CAST(CAST(id AS VARCHAR) || 'x' AS BIGINT) AS v FROM source");
    await land(chain, "1.json", [1, 2]);
    const dry = await orderedRun({ pipeline_ids: [chain.ids[1], chain.ids[2], chain.ids[0]], dry_run: true });
    expect(dry.pipelines.map((p) => p.pipeline_id)).toEqual(chain.ids);
    expect((await cp.client.listUpdates(chain.ids[0])).updates).toEqual([]);

    const started = await orderedRun({ pipeline_ids: [chain.ids[2], chain.ids[0], chain.ids[1]] });
    await waitDone(chain.ids[0], started.pipelines[0]!.update_id!);
    let middle: { update_id: string; state: string } | undefined;
    for (let i = 0; i < 600 && !(middle && ["FAILED", "COMPLETED"].includes(middle.state)); i++) {
      [middle] = (await cp.client.listUpdates(chain.ids[1])).updates;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(middle?.state).toBe("FAILED");
    const { events } = await cp.client.events(chain.ids[1], { filter: "level = 'WARN'" });
    const ended = events.find((e) => e.event_type === "warning" && e.message.includes(started.request_id));
    expect(ended?.details).toMatchObject({
      warning: {
        ordered_run: { request_id: started.request_id, position: 2, of: 3, not_run: [chain.ids[2]] },
      },
    });
    expect((await cp.client.listUpdates(chain.ids[2])).updates).toEqual([]);
  });

  it("refuses pipelines that read each other in a circle, an unknown pipeline and unknown fields, starting nothing", async () => {
    const tag = randomUUID().slice(0, 8);
    const uri = (schema: string) => `s3://${testAws().storage.bucket}/tables/${CATALOG}/${schema}/t`;
    const circle = async (schema: string, reads: string) =>
      (
        await cp.client.createPipeline({
          name: `circle ${tag} ${schema}`,
          catalog: CATALOG,
          schema: `circle_${tag}_${schema}`,
          definition: {
            datasets: [
              {
                type: "streaming_table",
                name: "t",
                flows: [
                  {
                    name: "f",
                    source: { type: "delta", path: uri(`circle_${tag}_${reads}`) },
                    sql: "SELECT * FROM source",
                  },
                ],
              },
            ],
          },
        })
      ).pipeline_id;
    const p = await circle("p", "q");
    const q = await circle("q", "p");
    const cycle = await orderedRun({ pipeline_ids: [p, q] }).catch((e: unknown) => e);
    expect(cycle).toMatchObject({ status: 400, errorCode: "INVALID_ORDERED_RUN.PIPELINE_CYCLE" });
    expect((cycle as Error).message).toContain(`circle ${tag} p`);
    const unknown = await orderedRun({ pipeline_ids: [p, randomUUID()] }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ status: 404, errorCode: "RESOURCE_DOES_NOT_EXIST" });
    for (const body of [
      { pipeline_ids: [p, q], wait: true },
      { pipeline_ids: [p] },
      { pipeline_ids: [p, p] },
    ]) {
      const refused = await orderedRun(body).catch((e: unknown) => e);
      expect((refused as EbbApiError).status, JSON.stringify(body)).toBe(400);
    }
    expect((await cp.client.listUpdates(p)).updates).toEqual([]);
  });
});
