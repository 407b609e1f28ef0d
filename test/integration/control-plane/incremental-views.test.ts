import { mkdir, rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Incremental materialized views through the HTTP API on the local runtime: the event log says which
 * way each refresh went (`flow_progress.refresh` and `refresh_reason`, on the view's flow). A GROUP BY
 * of decomposable aggregates refreshes from the rows its input gained, also right after a rewind
 * (from the restored state); a non-decomposable query, a changed definition and a full refresh
 * recompute, each with its reason; the view's rows are right either way. After a rewind with nothing
 * to replay (the bad batch removed), no view writes a refresh that would only repeat its rows.
 */

interface ViewProgress {
  readonly refresh: string;
  readonly refresh_reason: string;
}

const definition = (landing: string, sql: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      // Compacts whenever two small files are due: the replay after the rewind compacts the file it
      // appends with the restored ones, which the view still reads incrementally.
      properties: { "ebb.autoCompact.minNumFiles": "2" },
      flows: [
        {
          name: "ingest",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { k: "VARCHAR", v: "BIGINT" },
          },
          sql: "SELECT k, v FROM source",
        },
      ],
    },
    { type: "materialized_view", name: "totals", sql },
  ],
});

const GROUPED = "SELECT k, count(*) AS n, sum(v) AS total, max(v) AS hi FROM raw GROUP BY k";

describe("incremental materialized views through the API", () => {
  let cp: TestControlPlane;
  let seq = 0;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  const name = "views";
  const land = (rows: Record<string, unknown>[]) =>
    cp.land(`${name}/${String(++seq).padStart(3, "0")}.json`, rows);
  const run = async (pipelineId: string, body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state, update.error?.message).toBe("COMPLETED");
    return update;
  };
  const totals = async () =>
    (await cp.client.query(`views.${name}.totals`, { sql: "SELECT k, n, total, hi FROM t ORDER BY k" })).rows;
  const refreshes = async (pipelineId: string) =>
    (await cp.client.events(pipelineId, { max_results: 100 })).events
      .filter((e) => e.origin?.flow_name === "totals")
      .map((e) => (e.details as Record<string, unknown>)["flow_progress"] as ViewProgress)
      .filter((p) => p?.refresh !== undefined)
      .reverse();

  it("says in the event log which way each refresh went", async () => {
    await mkdir(`${cp.landing}/${name}`, { recursive: true });
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      name,
      catalog: "views",
      schema: name,
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition(`${cp.landing}/${name}`, GROUPED),
    });

    await land([
      { k: "a", v: 1 },
      { k: "b", v: 5 },
    ]);
    await run(pipelineId);
    const point = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    await land([{ k: "a", v: 10 }]);
    await run(pipelineId);
    expect(await totals()).toEqual([
      { k: "a", n: 2, total: 11, hi: 10 },
      { k: "b", n: 1, total: 5, hi: 5 },
    ]);

    // Back to the point, then the replay: from the restored partials, not from scratch.
    await run(pipelineId, { rewind_spec: { rewind_point_id: point } });
    // The file landed after the point is read again, with this one: two appends, then a compaction.
    await land([{ k: "b", v: 7 }]);
    await run(pipelineId);
    expect(await totals()).toEqual([
      { k: "a", n: 2, total: 11, hi: 10 },
      { k: "b", n: 2, total: 12, hi: 7 },
    ]);
    // What a full recompute gives: the view's query over every row of its input.
    expect(
      (
        await cp.client.query(`views.${name}.raw`, {
          sql: "SELECT k, count(*) AS n, sum(v) AS total, max(v) AS hi FROM t GROUP BY k ORDER BY k",
        })
      ).rows,
    ).toEqual(await totals());

    // Another definition: its state would mean something else, so it recomputes.
    await cp.client.editPipeline(pipelineId, {
      definition: definition(
        `${cp.landing}/${name}`,
        `${GROUPED.replace(" GROUP BY", " WHERE v > 1 GROUP BY")}`,
      ),
    });
    await run(pipelineId);
    // A non-decomposable aggregate always recomputes.
    await cp.client.editPipeline(pipelineId, {
      definition: definition(
        `${cp.landing}/${name}`,
        "SELECT k, count(*) AS n, median(v) AS total, max(v) AS hi FROM raw GROUP BY k",
      ),
    });
    await run(pipelineId);
    await cp.client.editPipeline(pipelineId, { definition: definition(`${cp.landing}/${name}`, GROUPED) });
    await run(pipelineId, { full_refresh: true });
    expect(await totals()).toEqual([
      { k: "a", n: 2, total: 11, hi: 10 },
      { k: "b", n: 2, total: 12, hi: 7 },
    ]);

    const seen = await refreshes(pipelineId);
    expect(seen.map((p) => p.refresh)).toEqual([
      "FULL_RECOMPUTE",
      "INCREMENTAL",
      "INCREMENTAL",
      "FULL_RECOMPUTE",
      "FULL_RECOMPUTE",
      "FULL_RECOMPUTE",
    ]);
    expect(seen[0]!.refresh_reason).toMatch(/no table yet/);
    expect(seen[1]!.refresh_reason).toMatch(/input raw only gained rows since the last refresh/);
    expect(seen[2]!.refresh_reason).toMatch(
      /from the state of its refresh at version \d+, which a RESTORE of the view \(a rewind\) brought back: input raw only gained rows since that refresh \(1 new data file\)/,
    );
    expect(seen[3]!.refresh_reason).toMatch(/definition changed/);
    expect(seen[4]!.refresh_reason).toMatch(/not a decomposable GROUP BY: median\(\)/);
    expect(seen[5]!.refresh_reason).toMatch(/no table yet \(its first refresh, or a full refresh\)/);
  });

  it("writes no refresh after a rewind with nothing to replay, and refreshes from the restored state after it", async () => {
    const folder = "views_rewound";
    const landing = `${cp.landing}/${folder}`;
    await mkdir(landing, { recursive: true });
    const base = definition(landing, GROUPED);
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: folder,
      catalog: "views",
      schema: folder,
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: {
        datasets: [
          ...base.datasets,
          // Not decomposable: recomputed from all rows whenever it refreshes.
          { type: "materialized_view", name: "medians", sql: "SELECT k, median(v) AS m FROM raw GROUP BY k" },
        ],
      },
    });
    const rowsOf = async (view: string, order: string) =>
      (await cp.client.query(`views.${folder}.${view}`, { sql: `SELECT * FROM t ORDER BY ${order}` })).rows;
    const versions = async () =>
      Promise.all(
        ["totals", "medians"].map(
          async (view) => (await cp.client.history(`views.${folder}.${view}`)).history[0],
        ),
      );

    await cp.land(`${folder}/001.json`, [
      { k: "a", v: 1 },
      { k: "b", v: 5 },
    ]);
    await run(pipelineId);
    const point = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    const atPoint = { totals: await rowsOf("totals", "k"), medians: await rowsOf("medians", "k") };
    await cp.land(`${folder}/002.json`, [{ k: "a", v: -1000 }]);
    await run(pipelineId);

    // The bad batch: rewind before it and remove it, so the replay has nothing to read.
    await run(pipelineId, { rewind_spec: { rewind_point_id: point } });
    await rm(`${landing}/002.json`);
    const rewound = await versions();
    expect(rewound.map((h) => h?.operation)).toEqual(["RESTORE", "RESTORE"]);
    await run(pipelineId);
    expect(await versions()).toEqual(rewound);
    expect(await rowsOf("totals", "k")).toEqual(atPoint.totals);
    expect(await rowsOf("medians", "k")).toEqual(atPoint.medians);

    // New rows: the incremental view continues from the state the rewind restored.
    await cp.land(`${folder}/003.json`, [{ k: "b", v: 7 }]);
    await run(pipelineId);
    expect(await rowsOf("totals", "k")).toEqual([
      { k: "a", n: 1, total: 1, hi: 1 },
      { k: "b", n: 2, total: 12, hi: 7 },
    ]);
    expect(await rowsOf("medians", "k")).toEqual([
      { k: "a", m: 1 },
      { k: "b", m: 6 },
    ]);
    const latest = (await cp.client.events(pipelineId, { max_results: 100 })).events
      .filter((e) => e.origin?.flow_name === "totals")
      .map((e) => (e.details as Record<string, unknown>)["flow_progress"] as ViewProgress)
      .find((p) => p?.refresh !== undefined);
    expect(latest?.refresh).toBe("INCREMENTAL");
  });

  it("keeps a view that orders by output columns incremental, its rows in that order; LIMIT and DISTINCT recompute", async () => {
    const folder = "views_ordered";
    const landing = `${cp.landing}/${folder}`;
    await mkdir(landing, { recursive: true });
    const base = definition(
      landing,
      "SELECT k, count(*) AS n, sum(v) AS total FROM raw GROUP BY k ORDER BY n DESC, 1",
    );
    const views = {
      ranked: "SELECT k, count(*) AS n, sum(v) AS total FROM raw GROUP BY k ORDER BY n DESC, 1",
      top: "SELECT k, count(*) AS n FROM raw GROUP BY k ORDER BY n DESC LIMIT 1",
      distinct: "SELECT DISTINCT k, count(*) AS n FROM raw GROUP BY k",
      by_expression: "SELECT k, count(*) AS n FROM raw GROUP BY k ORDER BY sum(v)",
    };
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: folder,
      catalog: "views",
      schema: folder,
      definition: {
        datasets: [
          base.datasets[0]!,
          ...Object.entries(views).map(([view, sql]) => ({ type: "materialized_view", name: view, sql })),
        ],
      },
    });
    await cp.land(`${folder}/001.json`, [
      { k: "a", v: 1 },
      { k: "b", v: 5 },
      { k: "b", v: 6 },
    ]);
    await run(pipelineId);
    await cp.land(`${folder}/002.json`, [
      { k: "c", v: 2 },
      { k: "c", v: 3 },
      { k: "c", v: 4 },
    ]);
    await run(pipelineId);

    // Read without an ORDER BY: the rows as the view wrote them.
    const ranked = await cp.client.query(`views.${folder}.ranked`, { sql: "SELECT * FROM t" });
    expect(ranked.rows).toEqual([
      { k: "c", n: 3, total: 9 },
      { k: "b", n: 2, total: 11 },
      { k: "a", n: 1, total: 1 },
    ]);
    const last = async (view: string) =>
      (await cp.client.events(pipelineId, { max_results: 200 })).events
        .filter((e) => e.origin?.flow_name === view)
        .map((e) => (e.details as Record<string, unknown>)["flow_progress"] as ViewProgress)
        .find((p) => p?.refresh !== undefined);
    expect(await last("ranked")).toMatchObject({ refresh: "INCREMENTAL" });
    expect(await last("top")).toMatchObject({
      refresh: "FULL_RECOMPUTE",
      refresh_reason: "the query has LIMIT or OFFSET",
    });
    expect(await last("distinct")).toMatchObject({
      refresh: "FULL_RECOMPUTE",
      refresh_reason: "the query has DISTINCT",
    });
    expect((await last("by_expression"))?.refresh_reason).toMatch(
      /orders by an expression, not by output columns/,
    );
  });
  it("fails an update whose view names a column its input lacks as the user's SQL, naming the view", async () => {
    const folder = "views_bad_column";
    await mkdir(`${cp.landing}/${folder}`, { recursive: true });
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: folder,
      catalog: "views",
      schema: folder,
      definition: definition(`${cp.landing}/${folder}`, "SELECT k, sum(nope) AS total FROM raw GROUP BY k"),
    });
    await cp.land(`${folder}/001.json`, [{ k: "a", v: 1 }]);
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const failed = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(failed.state).toBe("FAILED");
    expect(failed.error?.error_code).toBe("QUERY_FAILED");
    expect(failed.error?.message).toMatch(
      /^the SQL of materialized view "totals" failed: Binder Error: .*nope/,
    );
  });
});
