import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { loadSnapshot, scanRows, TableNotFoundError } from "../../../shared/delta/index.ts";
import { withPrefix } from "../../../shared/object-store/prefixed-object-store.ts";
import { branchTableStore } from "../../../shared/store/branch-table-store.ts";
import { testObjectStore } from "../../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";
import { ordersTable } from "../../support/orders-table.ts";
import { pipelinesRepository } from "../repositories/repositories.ts";

/**
 * Replay on a branch through the HTTP API on the local runtime (docs/branches.md "Replay on a
 * branch"): after a bad deploy, a branch at the point before it, the fix deployed, and an update with
 * `"branch"` replays the fixed definition on the branch while live keeps running. Every branch table
 * then equals a from-scratch run of the fixed definition over the same input, the diff is the
 * difference between that run and live, and a publish makes live the fixed run (or is refused when
 * live moved on meanwhile).
 */

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
});
afterAll(async () => {
  await cp?.close();
});

const CATALOG = "main";
const FIXED = "SELECT id, amount FROM source";
const BAD = "SELECT id, amount * 2 AS amount FROM source";
const TABLES = ["orders", "big"] as const;

type Row = { id: number; amount: number };

/** orders (auto_loader, `sql`) → big (a stream of orders, the rows with amount ≥ 20). */
async function createPipeline(sql: string) {
  const tag = randomUUID().slice(0, 8);
  await mkdir(path.join(cp.landing, tag));
  const schema = `brr_${tag}`;
  const definition = (query: string) => ({
    name: `branch replay ${tag}`,
    catalog: CATALOG,
    schema,
    configuration: { "pipelines.rewind.enabled": "true" },
    definition: {
      datasets: [
        ordersTable(`${cp.landing}/${tag}/`, query),
        {
          type: "streaming_table",
          name: "big",
          flows: [
            {
              name: "pick",
              source: { type: "stream", dataset: "orders" },
              sql: "SELECT id, amount FROM source WHERE amount >= 20",
            },
          ],
        },
      ],
    },
  });
  const { pipeline_id } = (await cp.client.createPipeline(definition(sql))) as { pipeline_id: string };
  return {
    id: pipeline_id,
    tag,
    schema,
    table: (name: string) => `${CATALOG}.${schema}.${name}`,
    folder: (name: string) => `tables/${CATALOG}/${schema}/${name}/`,
    definition,
  };
}
type Pipeline = Awaited<ReturnType<typeof createPipeline>>;

async function settle(pipelineId: string, updateId: string): Promise<void> {
  const update = await cp.client.waitForUpdate(pipelineId, updateId, { intervalMs: 200 });
  expect(update.state, JSON.stringify(update.error ?? {})).toBe("COMPLETED");
}

async function run(pipelineId: string, body: Record<string, unknown> = {}): Promise<string> {
  const started = await cp.client.startUpdate(pipelineId, body);
  await settle(pipelineId, started.update_id);
  return started.update_id;
}

const sorted = (rows: Row[]) => rows.sort((a, b) => a.id - b.id || a.amount - b.amount);

async function liveRows(p: Pipeline, table: string): Promise<Row[]> {
  const { rows } = await cp.client.query(p.table(table), { sql: "SELECT id, amount FROM t" });
  return sorted(rows.map((r) => ({ id: Number(r["id"]), amount: Number(r["amount"]) })));
}

/** A branch table's rows, read from its log in the bucket as Ebb's branch view reads them. */
async function branchRows(p: Pipeline, table: string, branch: string): Promise<Row[]> {
  const store = branchTableStore(withPrefix(testObjectStore(""), p.folder(table)), branch);
  try {
    const snapshot = await loadSnapshot(store);
    return sorted(
      (await scanRows(store, snapshot)).map((r) => ({ id: Number(r["id"]), amount: Number(r["amount"]) })),
    );
  } catch (error) {
    if (error instanceof TableNotFoundError) return [];
    throw error;
  }
}

async function land(pipelines: readonly Pipeline[], file: string, rows: Row[]) {
  for (const p of pipelines) await cp.land(`${p.tag}/${file}`, rows);
}

async function newestPoint(pipelineId: string): Promise<string> {
  const { rewind_points } = await cp.client.rewindPoints(pipelineId);
  return rewind_points.find((p) => p.kind !== "dry-run")!.rewind_point_id;
}

async function errorOf(call: Promise<unknown>): Promise<EbbApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EbbApiError);
  return error as EbbApiError;
}

/** The multiset difference a − b (rows of a not matched one for one in b). */
function minus(a: readonly Row[], b: readonly Row[]): Row[] {
  const left = [...b];
  return a.filter((row) => {
    const at = left.findIndex((r) => r.id === row.id && r.amount === row.amount);
    if (at < 0) return true;
    left.splice(at, 1);
    return false;
  });
}

/**
 * A pipeline with a bad deploy after its first file, a branch `fix` at the point before it, the fix
 * deployed; and a reference pipeline that ran the fixed definition from scratch over the same files.
 */
async function badDeployThenBranch() {
  const p = await createPipeline(FIXED);
  const reference = await createPipeline(FIXED);
  await land([p, reference], "1.json", [
    { id: 1, amount: 10 },
    { id: 2, amount: 20 },
  ]);
  await run(p.id);
  const point = await newestPoint(p.id);
  await cp.client.editPipeline(p.id, p.definition(BAD));
  await land([p, reference], "2.json", [
    { id: 3, amount: 15 },
    { id: 4, amount: 5 },
  ]);
  await run(p.id);
  await cp.client.createBranch(p.id, "fix", { rewind_point_id: point });
  await cp.client.editPipeline(p.id, p.definition(FIXED));
  return { p, reference };
}

describe("replay on a branch", () => {
  it("replays the fixed definition on the branch: its tables equal a fixed run, the diff is fixed vs live, publish makes live the fixed run", async () => {
    const { p, reference } = await badDeployThenBranch();
    const live = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await liveRows(p, t)])));
    const liveVersion = (await cp.client.query(p.table("orders"), { sql: "SELECT 1" })).version;

    const pointsBefore = (await cp.client.rewindPoints(p.id)).rewind_points.length;
    const updateId = await run(p.id, { branch: "fix" });
    await run(reference.id);

    // Every branch table is the fixed run's; live is as it was.
    for (const table of TABLES) {
      const fixed = await liveRows(reference, table);
      expect(await branchRows(p, table, "fix"), table).toEqual(fixed);
      expect(await liveRows(p, table), table).toEqual(live[table]);
    }
    expect((await cp.client.query(p.table("orders"), { sql: "SELECT 1" })).version).toBe(liveVersion);
    expect(await branchRows(p, "orders", "fix")).toEqual([
      { id: 1, amount: 10 },
      { id: 2, amount: 20 },
      { id: 3, amount: 15 },
      { id: 4, amount: 5 },
    ]);

    // The update names its branch: in GET, in the list, and in its events' origin.
    const { update } = await cp.client.getUpdate(p.id, updateId);
    expect(update).toMatchObject({ branch: "fix", pipeline_id: p.id, state: "COMPLETED" });
    const listed = (await cp.client.listUpdates(p.id)).updates;
    expect(listed.find((u) => u.update_id === updateId)?.branch).toBe("fix");
    expect(listed.filter((u) => u.update_id !== updateId).every((u) => u.branch === undefined)).toBe(true);
    const events = (await cp.client.events(p.id, { max_results: 250 })).events.filter(
      (e) => e.origin.update_id === updateId,
    );
    expect(events.map((e) => e.event_type)).toContain("create_update");
    for (const event of events) expect(event.origin).toMatchObject({ pipeline_id: p.id, branch: "fix" });
    // Its rewind points are the branch's, not live's.
    expect((await cp.client.rewindPoints(p.id)).rewind_points).toHaveLength(pointsBefore);

    // The diff is the difference between the fixed run and live.
    const diff = await cp.client.branchDiff(p.id, "fix", { maxSamples: 50 });
    for (const table of TABLES) {
      const fixed = await liveRows(reference, table);
      const entry = diff.tables.find((t) => t.name === p.table(table))!;
      expect(sorted([...entry.only_on_branch.samples] as Row[]), table).toEqual(minus(fixed, live[table]!));
      expect(sorted([...entry.only_on_live.samples] as Row[]), table).toEqual(minus(live[table]!, fixed));
    }

    // Live unmoved: publish makes live the fixed run, and a live run after it reads nothing twice.
    const published = await cp.client.publishBranch(p.id, "fix");
    await settle(p.id, published.update_id);
    for (const table of TABLES)
      expect(await liveRows(p, table), table).toEqual(await liveRows(reference, table));
    await land([p, reference], "3.json", [{ id: 5, amount: 50 }]);
    await run(p.id);
    await run(reference.id);
    for (const table of TABLES)
      expect(await liveRows(p, table), table).toEqual(await liveRows(reference, table));
  });

  it("a branch with more commits of its own than live has versions publishes under live's numbering: its downstream stream reads on after the publish, nothing lost or twice", async () => {
    const { p, reference } = await badDeployThenBranch();
    // Several replays on the branch: its log numbers its own commits past live's latest version.
    await run(p.id, { branch: "fix" });
    for (const [file, rows] of [
      ["3.json", [{ id: 5, amount: 50 }]],
      ["4.json", [{ id: 6, amount: 60 }]],
      ["5.json", [{ id: 7, amount: 70 }]],
    ] as const) {
      await cp.land(`${p.tag}/${file}`, [...rows]);
      await run(p.id, { branch: "fix" });
    }
    const { branch } = await cp.client.branch(p.id, "fix");
    const orders = branch.tables.find((t) => t.name === p.table("orders"))!;
    const liveBefore = (await cp.client.query(p.table("orders"), { sql: "SELECT 1" })).version;
    expect(orders.branch_version).toBeGreaterThan(liveBefore + 1);

    const published = await cp.client.publishBranch(p.id, "fix");
    await settle(p.id, published.update_id);
    // The RESTORE names live's version the branch began from, not a branch version.
    const { history } = await cp.client.history(p.table("orders"));
    expect(history[0]).toMatchObject({ version: liveBefore + 1, operation: "RESTORE" });
    const parameters = history[0]!["operationParameters"] as Record<string, unknown>;
    expect(Number(parameters["version"])).toBe(orders.source_version);

    // Live reads on from the publish: the downstream stream neither skips nor re-reads a row.
    await land([reference], "3.json", [{ id: 5, amount: 50 }]);
    await land([reference], "4.json", [{ id: 6, amount: 60 }]);
    await land([reference], "5.json", [{ id: 7, amount: 70 }]);
    await land([p, reference], "6.json", [
      { id: 8, amount: 80 },
      { id: 9, amount: 1 },
    ]);
    await run(p.id);
    await run(reference.id);
    for (const table of TABLES)
      expect(await liveRows(p, table), table).toEqual(await liveRows(reference, table));
    expect((await liveRows(p, "big")).map((r) => r.id)).toEqual([2, 5, 6, 7, 8]);
  });

  it("deleting the pipeline deletes its branches: their pipeline items, records and logs", async () => {
    const { p } = await badDeployThenBranch();
    await run(p.id, { branch: "fix" });
    const branchId = `${p.id}~fix`;
    expect(await pipelinesRepository().get(branchId)).toBeDefined();
    await cp.client.deletePipeline(p.id);
    expect(await pipelinesRepository().get(branchId)).toBeUndefined();
    const records = await testObjectStore("").list(`state/${p.id}/branches/`);
    expect(records.objects).toEqual([]);
    for (const table of TABLES) expect(await branchRows(p, table, "fix"), table).toEqual([]);
    const logs = await testObjectStore("").list(`${p.folder("orders")}_branches/`);
    expect(logs.objects).toEqual([]);
  });

  it("a live update runs beside a branch update, neither touching the other's tables; a second branch update is PIPELINE_BUSY; publish is then BRANCH_OUT_OF_DATE", async () => {
    const { p, reference } = await badDeployThenBranch();
    await land([p, reference], "3.json", [{ id: 5, amount: 50 }]);

    // Both at once: the branch's update holds the branch, live's holds live.
    const onBranch = await cp.client.startUpdate(p.id, { branch: "fix" });
    const busy = await errorOf(cp.client.startUpdate(p.id, { branch: "fix" }));
    expect([busy.status, busy.errorCode]).toEqual([409, "PIPELINE_BUSY"]);
    // Nor is a branch discarded under its running update.
    const discard = await errorOf(cp.client.discardBranch(p.id, "fix"));
    expect([discard.status, discard.errorCode]).toEqual([409, "PIPELINE_BUSY"]);
    const onLive = await cp.client.startUpdate(p.id, {});
    await settle(p.id, onBranch.update_id);
    await settle(p.id, onLive.update_id);
    await run(reference.id);

    // Live read 3.json with the fixed definition on top of the bad rows; the branch is the fixed run.
    const badLive: Row[] = [
      { id: 1, amount: 10 },
      { id: 2, amount: 20 },
      { id: 3, amount: 30 },
      { id: 4, amount: 10 },
      { id: 5, amount: 50 },
    ];
    expect(await liveRows(p, "orders")).toEqual(badLive);
    expect(await liveRows(p, "big")).toEqual(badLive.filter((r) => r.amount >= 20));
    for (const table of TABLES)
      expect(await branchRows(p, table, "fix"), table).toEqual(await liveRows(reference, table));

    // Live moved on since the branch was made: publish is refused, live left as it is.
    const late = await errorOf(cp.client.publishBranch(p.id, "fix"));
    expect([late.status, late.errorCode]).toEqual([409, "BRANCH_OUT_OF_DATE"]);
    expect(await liveRows(p, "orders")).toEqual(badLive);

    // Its update ended: the branch is discarded.
    await cp.client.discardBranch(p.id, "fix");
    expect((await cp.client.branches(p.id)).branches ?? []).toEqual([]);
  });

  it("refuses what does not combine with branch, and an unknown branch, starting nothing", async () => {
    const { p } = await badDeployThenBranch();
    const before = (await cp.client.listUpdates(p.id)).updates.length;
    for (const body of [
      { branch: "fix", full_refresh: true },
      { branch: "fix", full_refresh_selection: ["orders"] },
      { branch: "fix", reset_checkpoint_selection: ["ingest"] },
      { branch: "fix", engine: "spark" },
      { branch: "fix", rewind_spec: { rewind_point_id: "x" } },
    ]) {
      const refused = await errorOf(cp.client.startUpdate(p.id, body));
      expect([refused.status, refused.errorCode], JSON.stringify(body)).toEqual([
        400,
        "INVALID_PARAMETER_VALUE",
      ]);
      const field = Object.keys(body).find((k) => k !== "branch")!;
      expect(refused.message).toContain(field);
    }
    const unknown = await errorOf(cp.client.startUpdate(p.id, { branch: "nope" }));
    expect([unknown.status, unknown.errorCode]).toEqual([404, "BRANCH_NOT_FOUND"]);
    expect((await cp.client.listUpdates(p.id)).updates.length).toBe(before);
    // refresh_selection combines: only what it selects runs on the branch.
    await run(p.id, { branch: "fix", refresh_selection: ["orders"] });
    expect((await branchRows(p, "orders", "fix")).map((r) => r.id)).toEqual([1, 2, 3, 4]);
    expect((await branchRows(p, "big", "fix")).map((r) => r.id)).toEqual([2]);
    // big's stream has not read orders' branch commits: live has no version for them, so no publish.
    const behind = await errorOf(cp.client.publishBranch(p.id, "fix"));
    expect([behind.status, behind.errorCode]).toEqual([409, "BRANCH_READER_BEHIND"]);
    expect(behind.message).toContain("pick");
    expect((await cp.client.listUpdates(p.id)).updates.length).toBe(before + 1);
  });
});
