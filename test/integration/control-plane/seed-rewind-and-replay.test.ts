import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDefinition } from "../../support/seed-scenario.ts";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * The seed's rewind-and-replay walk-through (shared/seeds/databricks-rewind-and-replay.txt) through
 * HTTP on the local runtime. The pipeline is named so that the seed's request bodies work verbatim:
 * its root dataset is `catalog.schema.table`.
 */

const SEED_REWIND_POINT_BODY = (pointId: string, dryRun = false) => ({
  cause: "USER_ACTION",
  rewind_spec: {
    rewind_point_id: pointId,
    datasets: [{ identifier: "catalog.schema.table", cascade: true, reset_checkpoints: true }],
    dry_run: dryRun,
  },
});

const SEED_TIMESTAMP_BODY = (timestamp: string) => ({
  cause: "USER_ACTION",
  rewind_spec: {
    rewind_timestamp: timestamp,
    datasets: [{ identifier: "catalog.schema.table", cascade: true, reset_checkpoints: true }],
    dry_run: false,
  },
});

/** The seed's SQL, verbatim (test/support/seed-sql/). */
const seedSql = (file: string) =>
  readFile(new URL(`../../support/seed-sql/${file}`, import.meta.url), "utf8");

describe("rewind and replay through the API (the seed's request bodies)", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  let goodPoint: string;

  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const totals = async () => (await cp.client.query("catalog.schema.totals")).rows[0];

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "seed walk-through",
      catalog: "catalog",
      schema: "schema",
      configuration: { "pipelines.rewind.betaEnabled": "true" },
      definition: seedDefinition(cp.landing, "SELECT id, amount FROM source"),
    }));
    await cp.land(
      "good.json",
      [1, 2, 3].map((id) => ({ id, amount: id * 10 })),
    );
    expect((await run()).state).toBe("COMPLETED");
    goodPoint = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    // The onset midpoint (to the second) must fall after the last good commit of every table, downstream included.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    await cp.land(
      "bad.json",
      [4, 5].map((id) => ({ id, amount: -1000 })),
    );
    expect((await run({ cause: "API_CALL" })).state).toBe("COMPLETED");
  });
  // The seed's tables are claimed by one pipeline at a time: purge them (claims and data) for the next file.
  afterAll(async () => {
    if (pipelineId) await cp.client.deletePipeline(pipelineId, true);
    await cp?.close();
  });

  it("ran the bad batch through (the problem to fix)", async () => {
    expect(await totals()).toEqual({ orders: 5, amount: 60 - 2000 });
  });

  it("a dry run validates, changes nothing and records a point that applies exactly that rewind", async () => {
    const update = await run(SEED_REWIND_POINT_BODY(goodPoint, true));
    expect(update.state).toBe("COMPLETED");
    expect(await totals()).toEqual({ orders: 5, amount: -1940 });
    const { events } = await cp.client.events(pipelineId, {
      filter: `event_type = 'rewind_summary' AND details.rewind_summary.dry_run = true AND origin.update_id = '${update.update_id}'`,
    });
    expect(events).toHaveLength(1);
    const points = (await cp.client.rewindPoints(pipelineId)).rewind_points.map((p) => p.rewind_point_id);
    expect(points).toContain(events[0]!.id);
  });

  it("finds the onset and its midpoint rewind_timestamp, which the seed's timestamp body accepts (dry run)", async () => {
    const onset = await cp.client.onset("catalog.schema.table", { predicate: "amount < 0" });
    expect(onset).toMatchObject({ found: true, first_bad_version: 2, last_good_version: 1 });
    // The owning pipeline, and its newest point from before the onset (the table at version 1).
    expect(onset.pipeline_id).toBe(pipelineId);
    expect(onset.rewind_point?.datasets).toContainEqual({
      identifier: "catalog.schema.table",
      table_version: 1,
    });
    const body = SEED_TIMESTAMP_BODY(onset["rewind_timestamp"] as string);
    const update = await run({ ...body, rewind_spec: { ...body.rewind_spec, dry_run: true } });
    expect(update.state).toBe("COMPLETED");
  });

  it("the seed's rewind-point query over event_log answers the rewind-points endpoint's points", async () => {
    const statement = (await seedSql("rewind-points.sql")).replace("<pipeline-id>", pipelineId);
    const answer = await cp.client.executeStatement({ statement, warehouse_id: "any" });
    expect(answer.status).toEqual({ state: "SUCCEEDED" });
    expect(answer.notices).toEqual([expect.stringContaining("warehouse_id is ignored")]);
    expect(answer.manifest!.schema.columns.map((c) => [c.name, c.type_name])).toEqual([
      ["rewind_point_id", "STRING"],
      ["timestamp", "TIMESTAMP"],
      ["message", "STRING"],
    ]);
    const rows = answer.result!.data_array;
    // The same points as the endpoint; the query's timestamp is the event's (when the point was
    // recorded), the endpoint's the state it restores, so they are compared against the event log.
    const points = (await cp.client.rewindPoints(pipelineId)).rewind_points;
    expect(points.length).toBeGreaterThanOrEqual(3);
    expect(rows.map(([id]) => id).sort()).toEqual(points.map((p) => p.rewind_point_id).sort());
    const { events } = await cp.client.events(pipelineId, {
      filter: "event_type = 'rewind_summary' AND details.rewind_summary.dry_run = true",
      max_results: 100,
    });
    expect(rows).toEqual(events.map((e) => [e.id, e.timestamp, e.message]));
  });

  it("the seed's onset recipe over table_changes and DESCRIBE HISTORY answers the onset endpoint's timestamp", async () => {
    // The seed says to replace the example predicate in parentheses with one selecting the bad rows.
    const statement = (await seedSql("onset.sql")).replace("(event_date >= '2026-09-29')", "(amount < 0)");
    const answer = await cp.client.executeStatement({ statement });
    expect(answer.status).toEqual({ state: "SUCCEEDED" });
    const onset = await cp.client.onset("catalog.schema.table", { predicate: "amount < 0" });
    expect(answer.result!.data_array).toEqual([[onset["rewind_timestamp"]]]);
  });

  it("rewinds to the point (seed body), deploys a fix and replays (an update with no rewind_spec)", async () => {
    const rewind = await run(SEED_REWIND_POINT_BODY(goodPoint));
    expect(rewind.state).toBe("COMPLETED");
    expect(await totals()).toEqual({ orders: 3, amount: 60 });
    const history = (await cp.client.history("catalog.schema.clean")).history;
    expect(history[0]).toMatchObject({
      operation: "RESTORE",
      operationParameters: { updateId: rewind.update_id },
    });
    const { events } = await cp.client.events(pipelineId, {
      filter: `origin.update_id = '${rewind.update_id}' AND event_type in ('rewind_progress', 'rewind_summary')`,
      order_by: "timestamp asc",
    });
    expect(events.map((e) => e.event_type)).toEqual([
      "rewind_progress",
      "rewind_progress",
      "rewind_progress",
      "rewind_summary",
    ]);
    expect(events.at(-1)!.details).toMatchObject({ rewind_summary: { dry_run: false } });

    await cp.client.editPipeline(pipelineId, {
      definition: seedDefinition(cp.landing, "SELECT id, amount FROM source WHERE amount > 0"),
    });
    const replay = await run();
    expect(replay).toMatchObject({ state: "COMPLETED", definition_version: 2 });
    expect(await totals()).toEqual({ orders: 3, amount: 60 });
    const raw = await cp.client.query("catalog.schema.table", { sql: "SELECT count(*) AS n FROM t" });
    expect(raw.rows).toEqual([{ n: 5 }]); // the bad records were read again, once, and filtered by the fix
  });

  it("refuses the seed's literal 2026-09-29 timestamp as beyond the 7-day retention, starting nothing", async () => {
    const before = (await cp.client.listUpdates(pipelineId)).updates.length;
    const refused = await cp.client
      .startUpdate(pipelineId, SEED_TIMESTAMP_BODY("2026-09-29 08:36:55"))
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(EbbApiError);
    expect(refused).toMatchObject({
      status: 400,
      errorCode: "INVALID_REWIND_SPECIFICATION.BEYOND_RETENTION",
    });
    expect((await cp.client.listUpdates(pipelineId)).updates.length).toBe(before);
  });
});
