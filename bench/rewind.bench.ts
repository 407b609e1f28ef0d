import { performance } from "node:perf_hooks";
import { RewindHarness } from "../test/support/rewind/rewind-harness.ts";
import { captureRewindPoint } from "../shared/rewind/rewind-points.ts";
import type { RewindPoint } from "../shared/rewind/rewind-point.ts";
import { listAllKeys } from "../shared/object-store/object-store.ts";

/**
 * Rewind and replay figures, measured on the engine over in-memory stores (no
 * network: what is measured is Ebb's own work and DuckDB's). The pipeline has three datasets:
 * files → `raw` (auto_loader) → `cleaned` (stream) → `totals` (aggregate materialized view); its
 * history is 10 updates of one file each, with a rewind point after every update.
 *
 * 1. Rewind time does not grow with data: rewind (plan with every check + execute) of the pipeline
 *    holding 1,000,000 rows vs 10,000 rows, same history shape (target ratio <= 1.2).
 * 2. Replay does only the affected work: rows read by the replay's flows / rows that arrived at their
 *    sources after the point, with the point at 90% of the history (target 1.00).
 * 3. Replay time vs full-refresh time, point at 90% of the history (target <= 0.2; with the
 *    aggregating view kept incrementally, <= 0.1: the replay refreshes `totals` from the restored
 *    partials and the rows `cleaned` gained, the full refresh recomputes it from every row). Measured
 *    three times: with auto-compaction as pipeline tables have it by default (due at 10 small files:
 *    the 10th update's own file waits for the next compaction, so no update here compacts), with it
 *    due at 9 files, so that the replayed update compacts the 9 files before it in `raw` and in
 *    `cleaned` as the original update at that place did (the replay keeps that compaction's output,
 *    which the rewind removed, instead of writing 900,000 rows again), and with it off. Each case
 *    runs 3 rounds, each on a fresh fixture (the median is reported): figure 1's rewinds add commits
 *    and points to its fixtures, so no replay is measured on them.
 */

export const UPDATES = 10;

/**
 * `on`: auto-compaction as pipeline tables have it by default (10 small files); `replayed`: on, due
 * at 9 files, so that the replayed update is the one that compacts; `off`.
 */
export type Compaction = "on" | "replayed" | "off";

function definition(landingUri: string, compaction: Compaction) {
  const properties =
    compaction === "on"
      ? {}
      : compaction === "replayed"
        ? { properties: { "ebb.autoCompact.minNumFiles": String(UPDATES - 1) } }
        : { properties: { "delta.autoOptimize.autoCompact": "false" } };
  return {
    name: "Rewind bench",
    catalog: "main",
    schema: "bench",
    configuration: { "pipelines.rewind.enabled": "true" },
    datasets: [
      {
        name: "raw",
        type: "streaming_table",
        ...properties,
        flows: [
          {
            name: "ingest",
            source: {
              type: "auto_loader",
              path: landingUri,
              format: "json",
              schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" },
            },
            sql: "SELECT id, amount, region FROM source",
            options: { max_files_per_batch: 1 },
          },
        ],
      },
      {
        name: "cleaned",
        type: "streaming_table",
        ...properties,
        flows: [
          {
            name: "clean",
            source: { type: "stream", dataset: "raw" },
            sql: "SELECT id, amount * 2 AS amount2, region FROM source WHERE amount >= 0",
          },
        ],
      },
      {
        name: "totals",
        type: "materialized_view",
        sql: "SELECT region, sum(amount2) AS total, count(*) AS n FROM cleaned GROUP BY region",
      },
    ],
  };
}

function jsonFile(from: number, rows: number): string {
  const regions = ["eu", "us", "apac"];
  const lines: string[] = [];
  for (let id = from; id < from + rows; id++)
    lines.push(`{"id":${id},"amount":${id % 1000},"region":"${regions[id % 3]}"}`);
  return lines.join("\n") + "\n";
}

interface Fixture {
  readonly h: RewindHarness;
  /** The point after each update, oldest first. */
  readonly points: readonly RewindPoint[];
  readonly rowsPerUpdate: number;
}

export async function fixture(totalRows: number, compaction: Compaction = "on"): Promise<Fixture> {
  const h = new RewindHarness();
  await h.deploy(definition(h.landingUri, compaction));
  const rowsPerUpdate = totalRows / UPDATES;
  const points: RewindPoint[] = [];
  for (let i = 0; i < UPDATES; i++) {
    await h.land(`part-${String(i).padStart(3, "0")}.json`, jsonFile(i * rowsPerUpdate, rowsPerUpdate));
    await h.run();
    points.push((await captureRewindPoint(h.env(), "update-end"))!);
  }
  return { h, points, rowsPerUpdate };
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median time of a whole-pipeline rewind, alternating between the point at 50% and the last point. */
async function rewindTime(f: Fixture, rounds = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const target = i % 2 === 0 ? f.points[UPDATES / 2 - 1]! : f.points[UPDATES - 1]!;
    times.push((await timed(() => f.h.rewind({ rewind_point_id: target.rewindPointId }))).ms);
  }
  return median(times);
}

/** The large pipeline's rows (`EBB_BENCH_REWIND_ROWS`, default 1M; the second size is 10M). */
const LARGE_ROWS = Number(process.env["EBB_BENCH_REWIND_ROWS"] ?? "1000000");

/** The replay figures' cases, each measured on fixtures of its own. */
const CASES: readonly (readonly [Compaction, string])[] = [
  ["on", "auto-compaction on (the default)"],
  ["replayed", "auto-compaction on, due at the replayed update"],
  ["off", "auto-compaction off"],
];

/** Rounds of each replay figure (each on a fresh fixture); the median is reported. */
const ROUNDS = 3;

export async function run(): Promise<void> {
  // 1. Rewind time vs data size, on fixtures used for nothing else: these rewinds add commits and
  // rewind points to the tables, and a replay measured after them would not measure the fixture it says.
  {
    const small = await fixture(10_000);
    const large = await fixture(LARGE_ROWS);
    await rewindTime(small, 1); // warm-up
    const smallMs = await rewindTime(small);
    const largeMs = await rewindTime(large);
    console.log(
      `rewind of 3 datasets: 10,000 rows ${smallMs.toFixed(1)} ms, ${LARGE_ROWS.toLocaleString("en")} rows ${largeMs.toFixed(1)} ms, ratio ${(largeMs / smallMs).toFixed(2)} (target <= 1.2)`,
    );
  }

  // 2 and 3. Point at 90% of the history: rewind there, replay; then a full refresh of everything.
  // Every round of every case starts from a fresh fixture built the same way, so the cases differ
  // only in their compaction settings and the rounds only in the host's noise.
  for (const [compaction, label] of CASES) {
    const rounds: ReplayRound[] = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(await replayRound(await fixture(LARGE_ROWS, compaction)));
    printReplayFigures(label, rounds);
  }
}

interface ReplayRound {
  readonly replayMs: number;
  readonly refreshMs: number;
  readonly idleMs: number;
  readonly rowsRead: number;
  readonly arrivedAfterPoint: number;
  readonly flowRows: string;
  readonly written: { readonly raw: number; readonly cleaned: number };
  readonly view: { readonly replay: string; readonly refresh: string };
}

/** On a fresh fixture: rewind to the point at 90%, replay, an update with nothing new, a full refresh. */
async function replayRound(f: Fixture): Promise<ReplayRound> {
  const { h, points, rowsPerUpdate } = f;
  await h.rewind({ rewind_point_id: points[UPDATES - 2]!.rewindPointId });
  const before = await dataFileCounts(h);
  const replay = await timed(() => h.run());
  const after = await dataFileCounts(h);
  const idle = await timed(() => h.run());
  const refresh = await timed(() => h.refresh({ full_refresh: true }));
  const view = (update: typeof replay.value) => update.views["totals"]?.refresh ?? "unchanged";
  return {
    replayMs: replay.ms,
    refreshMs: refresh.ms,
    idleMs: idle.ms,
    rowsRead: Object.values(replay.value.flows).reduce((n, flow) => n + flow.rowsIn, 0),
    arrivedAfterPoint: rowsPerUpdate * 2, // the last file reaches raw, then cleaned
    flowRows: `raw ${replay.value.flows["ingest"]?.rowsIn}, cleaned ${replay.value.flows["clean"]?.rowsIn}`,
    written: { raw: after.raw - before.raw, cleaned: after.cleaned - before.cleaned },
    view: { replay: view(replay.value), refresh: view(refresh.value) },
  };
}

function printReplayFigures(label: string, rounds: readonly ReplayRound[]): void {
  const replayMs = median(rounds.map((r) => r.replayMs));
  const refreshMs = median(rounds.map((r) => r.refreshMs));
  const idleMs = median(rounds.map((r) => r.idleMs));
  const last = rounds.at(-1)!;
  console.log(`${label} (median of ${rounds.length} rounds, each on a fresh fixture):`);
  console.log(
    `  replay reads ${last.rowsRead} rows for ${last.arrivedAfterPoint} arrived after the point (${last.flowRows}): ratio ${(last.rowsRead / last.arrivedAfterPoint).toFixed(2)} (target 1.00)`,
  );
  console.log(
    `  replay from the point at 90%: ${replayMs.toFixed(0)} ms; full refresh: ${refreshMs.toFixed(0)} ms; ratio ${(replayMs / refreshMs).toFixed(3)} (target <= 0.2; <= 0.1 with the view kept incrementally)`,
  );
  console.log(
    `  each round's ratio: ${rounds.map((r) => (r.replayMs / r.refreshMs).toFixed(3)).join(", ")} (replay ${rounds.map((r) => r.replayMs.toFixed(0)).join(", ")} ms)`,
  );
  console.log(`  data files the replay wrote: raw ${last.written.raw}, cleaned ${last.written.cleaned}`);
  console.log(`  the view totals: replay ${last.view.replay}; full refresh ${last.view.refresh}`);
  // Both include the engine's fixed cost of an update (listing, snapshots, materialized view).
  console.log(
    `  an update with nothing new: ${idleMs.toFixed(0)} ms; without it the ratio is ${((replayMs - idleMs) / (refreshMs - idleMs)).toFixed(3)}`,
  );
}

/** Data files in each table's folder (written files stay until VACUUM). */
async function dataFileCounts(h: RewindHarness): Promise<{ raw: number; cleaned: number }> {
  const count = async (dataset: string) =>
    (await listAllKeys(h.tableStore(dataset), "")).filter(
      (o) => o.key.endsWith(".parquet") && !o.key.startsWith("_"),
    ).length;
  return { raw: await count("raw"), cleaned: await count("cleaned") };
}
