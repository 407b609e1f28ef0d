import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Windowed aggregation through the HTTP API on the local runtime: a tumbling window is appended once,
 * when the watermark passes its end; a late row is dropped and counted; a sliding window puts a row
 * in each window it falls in; a rewind restores the open windows' partial aggregates with the
 * checkpoint, so the replay appends each window once, with the same figures.
 */

interface BatchProgress {
  readonly state_operators: Record<string, unknown>;
  readonly event_time: { readonly watermark: string | null };
}

const definition = (landing: string, sql: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "metrics",
      flows: [
        {
          name: "per_window",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { k: "VARCHAR", v: "BIGINT", ts: "TIMESTAMP" },
          },
          watermark: { column: "ts", delay: "5 minutes" },
          // One file per batch, so the replay after a rewind cuts the same batches.
          options: { max_files_per_batch: 1 },
          sql,
        },
      ],
    },
  ],
});

const TUMBLING =
  'SELECT window.start AS start, window.end AS "end", k, count(*) AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi, avg(v) AS mean ' +
  "FROM source GROUP BY window(ts, '10 minutes'), k";

describe("windowed aggregation through the API", () => {
  let cp: TestControlPlane;
  let seq = 0;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });
  afterAll(() => cp?.close());

  const create = async (name: string, sql: string) => {
    await mkdir(`${cp.landing}/${name}`, { recursive: true });
    const { pipeline_id } = await cp.client.createPipeline({
      name,
      catalog: "windows",
      schema: name,
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition(`${cp.landing}/${name}`, sql),
    });
    return pipeline_id;
  };
  const land = (name: string, rows: Record<string, unknown>[]) =>
    cp.land(`${name}/${String(++seq).padStart(3, "0")}.json`, rows);
  const run = async (pipelineId: string, body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const rows = async (schema: string, sql: string) =>
    (await cp.client.query(`windows.${schema}.metrics`, { sql })).rows;
  /** Rewinds to the point (the table then holds no window) and replays: the same windows, once. */
  const rewindAndReplay = async (
    pipelineId: string,
    point: string,
    windows: () => Promise<unknown[]>,
    replayed: unknown[],
  ) => {
    const rewind = await run(pipelineId, { rewind_spec: { rewind_point_id: point } });
    expect(rewind.state, rewind.error?.message).toBe("COMPLETED");
    expect(await windows()).toEqual([]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    expect(await windows()).toEqual(replayed);
  };
  const progress = async (pipelineId: string) =>
    (await cp.client.events(pipelineId, { max_results: 100 })).events
      .map((e) => (e.details as Record<string, unknown>)["flow_progress"] as BatchProgress | undefined)
      .filter((p): p is BatchProgress => p?.state_operators !== undefined)
      .reverse();

  it("appends a tumbling window once, when the watermark passes its end; drops late rows; a rewind restores the partials", async () => {
    const pipelineId = await create("tumbling", TUMBLING);
    const all =
      "SELECT strftime(start, '%H:%M') AS s, strftime(\"end\", '%H:%M') AS e, k, n, total, lo, hi, mean FROM t ORDER BY s, k";
    await land("tumbling", [
      { k: "a", v: 1, ts: "2026-01-01 12:01:00" },
      { k: "a", v: 3, ts: "2026-01-01 12:09:00" },
      { k: "b", v: 5, ts: "2026-01-01 12:04:00" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    // Watermark 12:04: the 12:00 window is still open.
    expect(await rows("tumbling", all)).toEqual([]);
    const point = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;

    await land("tumbling", [
      { k: "a", v: 10, ts: "2026-01-01 12:08:00" },
      { k: "a", v: 7, ts: "2026-01-01 12:16:00" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    // Watermark 12:11: the 12:00 windows are complete, with the rows of both batches.
    const first = [
      { s: "12:00", e: "12:10", k: "a", n: 3, total: 14, lo: 1, hi: 10, mean: 14 / 3 },
      { s: "12:00", e: "12:10", k: "b", n: 1, total: 5, lo: 5, hi: 5, mean: 5 },
    ];
    expect(await rows("tumbling", all)).toEqual(first);

    await land("tumbling", [
      { k: "a", v: 100, ts: "2026-01-01 12:05:00" },
      { k: "b", v: 2, ts: "2026-01-01 12:30:00" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    const second = [...first, { s: "12:10", e: "12:20", k: "a", n: 1, total: 7, lo: 7, hi: 7, mean: 7 }];
    expect(await rows("tumbling", all)).toEqual(second);
    const batches = await progress(pipelineId);
    expect(batches.map((b) => b.state_operators["num_rows_dropped_by_watermark"])).toEqual([0, 0, 1]);
    expect(batches.map((b) => b.state_operators["num_windows_emitted"])).toEqual([0, 2, 1]);
    expect(batches.map((b) => b.event_time.watermark)).toEqual([
      "2026-01-01T12:04:00.000Z",
      "2026-01-01T12:11:00.000Z",
      "2026-01-01T12:25:00.000Z",
    ]);
    // Open after batch 3: (12:30, b).
    expect(batches.at(-1)?.state_operators["num_rows_total"]).toBe(1);

    // Back to the point: nothing appended, and the partials of (12:00, a) = {1, 3} and (12:00, b)
    // restored. The replay reads the later files again and appends the same windows once.
    await rewindAndReplay(pipelineId, point, () => rows("tumbling", all), second);
  });

  it("counts, sums and averages distinct values per window across batches; the state keeps each window's set; a rewind restores it", async () => {
    const pipelineId = await create(
      "distinct",
      "SELECT window.start AS start, k, count(DISTINCT v) AS n, sum(DISTINCT v) AS total, avg(DISTINCT v) AS mean, count(*) AS rows_seen " +
        "FROM source GROUP BY window(ts, '10 minutes'), k",
    );
    const all = "SELECT strftime(start, '%H:%M') AS s, k, n, total, mean, rows_seen FROM t ORDER BY s, k";
    await land("distinct", [
      { k: "a", v: 1, ts: "2026-01-01 12:01:00" },
      { k: "a", v: 2, ts: "2026-01-01 12:02:00" },
      { k: "a", v: 1, ts: "2026-01-01 12:03:00" },
      { k: "a", v: null, ts: "2026-01-01 12:04:00" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    const point = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    const state = await cp.client.flowState(pipelineId, "per_window");
    expect(state.tables[0]?.value_columns.map((c) => c.name)).toEqual([
      "count(DISTINCT v)",
      "sum(DISTINCT v)",
      "avg(DISTINCT v)",
      "count(*)",
    ]);
    const set = (state.rows[0]?.value["count(DISTINCT v)"] as number[]).filter((v) => v !== null);
    expect(set.map(Number).sort()).toEqual([1, 2]);

    // A value the window has seen in an earlier batch is not counted again.
    await land("distinct", [
      { k: "a", v: 2, ts: "2026-01-01 12:05:00" },
      { k: "a", v: 5, ts: "2026-01-01 12:06:00" },
      { k: "a", v: 9, ts: "2026-01-01 12:30:00" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    const written = [{ s: "12:00", k: "a", n: 3, total: 8, mean: 8 / 3, rows_seen: 6 }];
    expect(await rows("distinct", all)).toEqual(written);

    await rewindAndReplay(pipelineId, point, () => rows("distinct", all), written);
  });

  it("counts one zero and one NaN of doubles per window across batches, as DISTINCT does: -0.0 equals 0.0, NaN equals NaN", async () => {
    // The values are `k` read as a DOUBLE; each batch keeps its own zero and NaN, the merge one of each.
    const pipelineId = await create(
      "distinct_doubles",
      "SELECT window.start AS start, count(DISTINCT CAST(k AS DOUBLE)) AS n, count(*) AS rows_seen " +
        "FROM source GROUP BY window(ts, '10 minutes')",
    );
    await land("distinct_doubles", [
      { k: "-0.0", v: 1, ts: "2026-01-01 12:01:00" },
      { k: "NaN", v: 1, ts: "2026-01-01 12:02:00" },
      { k: "1.5", v: 1, ts: "2026-01-01 12:03:00" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    await land("distinct_doubles", [
      { k: "0.0", v: 1, ts: "2026-01-01 12:04:00" },
      { k: "NaN", v: 1, ts: "2026-01-01 12:05:00" },
      { k: "1.5", v: 1, ts: "2026-01-01 12:06:00" },
      { k: "2", v: 1, ts: "2026-01-01 12:30:00" },
    ]);
    expect((await run(pipelineId)).state).toBe("COMPLETED");
    expect(
      await rows("distinct_doubles", "SELECT strftime(start, '%H:%M') AS s, n, rows_seen FROM t ORDER BY s"),
    ).toEqual([{ s: "12:00", n: 3, rows_seen: 6 }]);
  });

  it("fails a batch whose aggregate names a column the source lacks as the user's SQL, naming the flow", async () => {
    const pipelineId = await create(
      "bad_column",
      "SELECT window, sum(nope) AS total FROM source GROUP BY window(ts, '10 minutes')",
    );
    await land("bad_column", [{ k: "a", v: 1, ts: "2026-01-01 12:01:00" }]);
    const failed = await run(pipelineId);
    expect(failed.state).toBe("FAILED");
    expect(failed.error?.error_code).toBe("QUERY_FAILED");
    expect(failed.error?.message).toMatch(/^the SQL of flow "per_window" failed: Binder Error: .*nope/);
  });

  it("puts a row in every sliding window it falls in", async () => {
    const pipelineId = await create(
      "sliding",
      "SELECT window, count(*) AS n FROM source GROUP BY window(ts, '10 minutes', '5 minutes')",
    );
    await land("sliding", [
      { k: "a", v: 1, ts: "2026-01-01 12:01:00" },
      { k: "a", v: 1, ts: "2026-01-01 12:07:00" },
      { k: "a", v: 1, ts: "2026-01-01 12:40:00" },
    ]);
    const update = await run(pipelineId);
    expect(update.state, update.error?.message).toBe("COMPLETED");
    // Watermark 12:35: windows ending by then; the 12:40 row's windows stay open.
    expect(
      await rows(
        "sliding",
        "SELECT strftime(window.start, '%H:%M') AS s, strftime(window.end, '%H:%M') AS e, n FROM t ORDER BY s",
      ),
    ).toEqual([
      { s: "11:55", e: "12:05", n: 1 },
      { s: "12:00", e: "12:10", n: 2 },
      { s: "12:05", e: "12:15", n: 1 },
    ]);

    // Other windows cannot continue from these open windows' partials: refused before it starts.
    await cp.client.editPipeline(pipelineId, {
      definition: definition(
        `${cp.landing}/sliding`,
        "SELECT window, count(*) AS n FROM source GROUP BY window(ts, '10 minutes')",
      ),
    });
    await land("sliding", [{ k: "a", v: 1, ts: "2026-01-01 12:41:00" }]);
    const refused = await run(pipelineId).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(refused).toMatchObject({ status: 409, errorCode: "INCOMPATIBLE_STATE" });
    expect(refused?.message).toMatch(
      /cannot continue from its operator state: its window state holds windows of 10 minutes sliding by 5 minutes.*reset_checkpoint_selection/,
    );
  });
});
