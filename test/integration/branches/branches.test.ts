import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { testObjectStore } from "../../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";
import { ordersTable } from "../../support/orders-table.ts";

/**
 * Branches through the HTTP API on the local runtime (docs/branches.md): a branch at a rewind point
 * after a bad deploy leaves live alone, its log sits inside each table's folder and names the point's
 * files, its diff against live says what the rewind would take away, and discard removes it.
 */

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
});
afterAll(async () => {
  await cp?.close();
});

const CATALOG = "main";

async function createPipeline(sql: string) {
  const tag = randomUUID().slice(0, 8);
  await mkdir(path.join(cp.landing, tag));
  const schema = `br_${tag}`;
  const definition = (query: string) => ({
    name: `branch ${tag}`,
    catalog: CATALOG,
    schema,
    configuration: { "pipelines.rewind.enabled": "true" },
    definition: {
      datasets: [ordersTable(`${cp.landing}/${tag}/`, query)],
    },
  });
  const { pipeline_id } = (await cp.client.createPipeline(definition(sql))) as { pipeline_id: string };
  return { id: pipeline_id, tag, schema, table: `${CATALOG}.${schema}.orders`, definition };
}

async function run(pipelineId: string, body: Record<string, unknown> = {}): Promise<void> {
  const started = await cp.client.startUpdate(pipelineId, body);
  const update = await cp.client.waitForUpdate(pipelineId, started.update_id, { intervalMs: 200 });
  expect(update.state).toBe("COMPLETED");
}

async function rows(table: string): Promise<{ id: number; amount: number }[]> {
  const { rows } = await cp.client.query(table, { sql: "SELECT id, amount FROM t ORDER BY id, amount" });
  return rows.map((r) => ({ id: Number(r["id"]), amount: Number(r["amount"]) }));
}

async function newestPoint(pipelineId: string): Promise<string> {
  const { rewind_points } = await cp.client.rewindPoints(pipelineId);
  return rewind_points.find((p) => p.kind !== "dry-run")!.rewind_point_id;
}

const bucket = () => testObjectStore("");

async function keysUnder(prefix: string): Promise<string[]> {
  const { objects } = await bucket().list(prefix);
  return objects.map((o) => o.key);
}

async function errorOf(call: Promise<unknown>): Promise<EbbApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EbbApiError);
  return error as EbbApiError;
}

describe("branches", () => {
  it("makes a branch at a point after a bad deploy: live untouched, diff = what the rewind takes away, discard removes it", async () => {
    const p = await createPipeline("SELECT id, amount FROM source");
    await cp.land(`${p.tag}/1.json`, [
      { id: 1, amount: 10 },
      { id: 2, amount: 20 },
    ]);
    await run(p.id);
    const point = await newestPoint(p.id);
    // The bad deploy: amounts doubled, and the next file read with it.
    await cp.client.editPipeline(p.id, p.definition("SELECT id, amount * 2 AS amount FROM source"));
    await cp.land(`${p.tag}/2.json`, [{ id: 3, amount: 30 }]);
    await run(p.id);
    const live = await rows(p.table);
    expect(live).toEqual([
      { id: 1, amount: 10 },
      { id: 2, amount: 20 },
      { id: 3, amount: 60 },
    ]);
    const liveVersion = (await cp.client.query(p.table, { sql: "SELECT 1" })).version;

    const { branch } = await cp.client.createBranch(p.id, "fix-1", { rewind_point_id: point });
    expect(branch).toMatchObject({
      name: "fix-1",
      rewind_point_id: point,
      tables: [{ name: p.table, from: "POINT", source_version: expect.any(Number) as number }],
      flows: [{ flow: "ingest", branch_seq: 1 }],
    });

    // Live is as it was: rows, version, and no rewind block.
    expect(await rows(p.table)).toEqual(live);
    expect((await cp.client.query(p.table, { sql: "SELECT 1" })).version).toBe(liveVersion);
    const status = await cp.client.getPipeline(p.id);
    expect(status.state).toBe("IDLE");

    // The branch's log is inside the table's folder and names the point's files: no data file copied.
    const folder = `tables/${CATALOG}/${p.schema}/orders/`;
    const branchLog = await keysUnder(`${folder}_branches/fix-1/_delta_log/`);
    expect(branchLog.some((k) => k.endsWith("00000000000000000000.json"))).toBe(true);
    const commit = new TextDecoder().decode(await bucket().get(branchLog.find((k) => k.endsWith(".json"))!));
    const adds = commit
      .split("\n")
      .filter((l) => l.includes('"add"'))
      .map((l) => (JSON.parse(l) as { add: { path: string } }).add.path);
    expect(adds.length).toBeGreaterThan(0);
    for (const add of adds) {
      expect(add.includes("/") || add.startsWith("part-")).toBe(true);
      expect(await bucket().head(folder + add)).toBeDefined();
    }
    expect(commit).toContain(`"appId":"${p.id}~fix-1/ingest"`);
    expect(commit).not.toContain(`"appId":"${p.id}/ingest"`);

    // Listed and shown.
    const listed = await cp.client.branches(p.id);
    expect(listed.branches.map((b) => b.name)).toEqual(["fix-1"]);
    const shown = await cp.client.branch(p.id, "fix-1");
    expect(shown.branch.tables[0]!.branch_version).toBe(0);

    // The diff: the branch holds the point's rows, live has the bad deploy's row besides.
    const diff = await cp.client.branchDiff(p.id, "fix-1");
    expect(diff.tables).toHaveLength(1);
    expect(diff.tables[0]).toMatchObject({
      name: p.table,
      branch_version: 0,
      live_version: liveVersion,
      keys: null,
      only_on_branch: { count: 0, samples: [] },
      only_on_live: { count: 1, samples: [{ id: 3, amount: 60 }] },
    });

    // Bad inputs: a name taken, an unknown branch, a name that cannot be a folder.
    const taken = await errorOf(cp.client.createBranch(p.id, "fix-1", { rewind_point_id: point }));
    expect([taken.status, taken.errorCode]).toEqual([409, "BRANCH_ALREADY_EXISTS"]);
    expect(taken.message).toContain("fix-1");
    const unknown = await errorOf(cp.client.branchDiff(p.id, "nope"));
    expect([unknown.status, unknown.errorCode]).toEqual([404, "BRANCH_NOT_FOUND"]);
    const badName = await errorOf(cp.client.createBranch(p.id, "Fix 1/..", { rewind_point_id: point }));
    expect(badName.errorCode).toBe("INVALID_PARAMETER_VALUE");

    // An update on a branch that does not exist: refused, nothing started (branch-replay.test.ts runs them).
    const updates = (await cp.client.listUpdates(p.id)).updates.length;
    const onNone = await errorOf(cp.client.startUpdate(p.id, { branch: "nope" } as never));
    expect(onNone.errorCode).toBe("BRANCH_NOT_FOUND");
    expect((await cp.client.listUpdates(p.id)).updates.length).toBe(updates);

    // Discard: the record and the log go; live's files and log stay.
    await cp.client.discardBranch(p.id, "fix-1");
    expect((await cp.client.branches(p.id)).branches).toEqual([]);
    expect(await keysUnder(`${folder}_branches/`)).toEqual([]);
    expect(await rows(p.table)).toEqual(live);
    const gone = await errorOf(cp.client.branch(p.id, "fix-1"));
    expect(gone.errorCode).toBe("BRANCH_NOT_FOUND");
    // The name is free again.
    await cp.client.createBranch(p.id, "fix-1", { rewind_point_id: point });
    expect((await cp.client.branchDiff(p.id, "fix-1")).tables[0]!.only_on_live.count).toBe(1);
  });

  it("a live VACUUM keeps every file a branch names, once no point does; discarding the branch frees them", async () => {
    const p = await createPipeline("SELECT id, amount FROM source");
    await cp.land(`${p.tag}/1.json`, [
      { id: 1, amount: 10 },
      { id: 2, amount: 20 },
    ]);
    await run(p.id);
    const point = await newestPoint(p.id);
    await cp.client.createBranch(p.id, "keep", { rewind_point_id: point });
    const folder = `tables/${CATALOG}/${p.schema}/orders/`;
    const pointFiles = (await keysUnder(folder)).filter((k) => k.endsWith(".parquet") && !k.includes("/_"));
    expect(pointFiles.length).toBeGreaterThan(0);

    // Live drops the point's files (a full refresh with a bad deploy), and no rewind point protects
    // them any more (the rewind retention shortened to a second: every point is past it).
    const bad = p.definition("SELECT id, amount * 2 AS amount FROM source");
    await cp.client.editPipeline(p.id, bad);
    await run(p.id, { full_refresh: true });
    await cp.client.editPipeline(p.id, {
      ...bad,
      configuration: { "pipelines.rewind.enabled": "true", "pipelines.rewind.retention": "1 second" },
    });
    for (let waited = 0; (await cp.client.rewindPoints(p.id)).rewind_points.length > 0; waited++) {
      expect(waited, "the rewind points expire").toBeLessThan(20);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    const vacuum = await cp.client.vacuum(p.table, { retain_hours: 0, allow_short_retention: true });
    expect(vacuum.protected_versions).toEqual([]);
    expect(vacuum.protected_branches).toEqual(["keep"]);
    expect(vacuum.files.map((f) => folder + f.path)).not.toEqual(expect.arrayContaining([pointFiles[0]]));
    for (const key of pointFiles) expect(await bucket().head(key), key).toBeDefined();
    const diff = await cp.client.branchDiff(p.id, "keep");
    expect(diff.tables[0]).toMatchObject({
      only_on_branch: {
        count: 2,
        samples: [
          { id: 1, amount: 10 },
          { id: 2, amount: 20 },
        ],
      },
      only_on_live: { count: 2 },
    });

    // Discarded, the branch keeps nothing: the next VACUUM removes the point's files.
    await cp.client.discardBranch(p.id, "keep");
    const after = await cp.client.vacuum(p.table, { retain_hours: 0, allow_short_retention: true });
    expect(after.protected_branches).toBeUndefined();
    expect(after.files.map((f) => folder + f.path).sort()).toEqual(expect.arrayContaining(pointFiles));
    for (const key of pointFiles) expect(await bucket().head(key), key).toBeUndefined();
  });

  it("publishes a branch made before a bad deploy: live becomes the point's data, a replay the fixed run; busy and moved-on refused", async () => {
    const p = await createPipeline("SELECT id, amount FROM source");
    await cp.land(`${p.tag}/1.json`, [
      { id: 1, amount: 10 },
      { id: 2, amount: 20 },
    ]);
    await run(p.id);
    const point = await newestPoint(p.id);
    await cp.client.editPipeline(p.id, p.definition("SELECT id, amount * 2 AS amount FROM source"));
    await cp.land(`${p.tag}/2.json`, [{ id: 3, amount: 30 }]);
    await run(p.id);
    const bad = await rows(p.table);
    const liveBefore = (await cp.client.query(p.table, { sql: "SELECT 1" })).version;
    await cp.client.createBranch(p.id, "fix", { rewind_point_id: point });

    // The fix is deployed, and live is published from the branch: the point's rows, one RESTORE.
    await cp.client.editPipeline(p.id, p.definition("SELECT id, amount FROM source"));
    const published = await cp.client.publishBranch(p.id, "fix");
    expect(published.tables).toEqual([{ table: p.table, branch_version: 0, live_version: liveBefore }]);
    // A publish is an update: it holds the pipeline (a run is refused while it goes), and ends COMPLETED.
    const during = await errorOf(cp.client.startUpdate(p.id, {}));
    const publishUpdate = await cp.client.waitForUpdate(p.id, published.update_id, { intervalMs: 200 });
    expect(publishUpdate).toMatchObject({
      state: "COMPLETED",
      cause: "USER_ACTION",
      publish: { branch: "fix" },
    });
    expect([during.status, during.errorCode]).toEqual([409, "PIPELINE_BUSY"]);
    expect(await rows(p.table)).toEqual([
      { id: 1, amount: 10 },
      { id: 2, amount: 20 },
    ]);
    const history = (await cp.client.history(p.table)).history;
    expect(history[0]).toMatchObject({ version: liveBefore + 1, operation: "RESTORE" });
    expect(history.filter((h) => h.operation === "RESTORE")).toHaveLength(1);
    const { events } = await cp.client.events(p.id, { filter: "event_type = 'branch_published'" });
    expect(events).toHaveLength(1);
    expect(events[0]!.origin.update_id).toBe(published.update_id);
    expect(events[0]!.details["branch_published"]).toMatchObject({
      branch: "fix",
      rewind_point_id: published.rewind_point_id,
      tables: [
        { table: p.table, branch_version: 0, live_version: liveBefore + 1, flows: [{ flow: "ingest" }] },
      ],
    });
    // The rewind point before it undoes it.
    expect(published.rewind_point_id).toEqual(expect.any(String));
    const points = (await cp.client.rewindPoints(p.id)).rewind_points.map((pt) => pt.rewind_point_id);
    expect(points).toContain(published.rewind_point_id);

    // The replay on live reads only what the point had not: the fixed run.
    await run(p.id);
    expect(await rows(p.table)).toEqual([
      { id: 1, amount: 10 },
      { id: 2, amount: 20 },
      { id: 3, amount: 30 },
    ]);
    expect(bad).not.toEqual(await rows(p.table));

    // Live moved on since a branch was made: its publish is refused, naming the way out.
    await cp.client.createBranch(p.id, "late", { rewind_point_id: point });
    await cp.land(`${p.tag}/3.json`, [{ id: 4, amount: 40 }]);
    // A live update (with a file to read) holds the pipeline: the publish waits its turn.
    const running = await cp.client.startUpdate(p.id, {});
    const busy = await errorOf(cp.client.publishBranch(p.id, "late"));
    expect([busy.status, busy.errorCode]).toEqual([409, "PIPELINE_BUSY"]);
    expect((await cp.client.waitForUpdate(p.id, running.update_id, { intervalMs: 200 })).state).toBe(
      "COMPLETED",
    );
    const late = await errorOf(cp.client.publishBranch(p.id, "late"));
    expect([late.status, late.errorCode]).toEqual([409, "BRANCH_OUT_OF_DATE"]);
    expect(late.message).toContain("make the branch again");
    expect((await rows(p.table)).map((r) => r.id)).toEqual([1, 2, 3, 4]);
  });
});
