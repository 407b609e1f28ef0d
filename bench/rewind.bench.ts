import { performance } from "node:perf_hooks";
import { RewindHarness } from "../test/support/rewind/rewind-harness.ts";
import { captureRewindPoint } from "../shared/rewind/rewind-points.ts";
import type { RewindPoint } from "../shared/rewind/rewind-point.ts";

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
 *    twice: with auto-compaction as pipeline tables have it by default, and with it off. With it on,
 *    the replayed update is the one whose file is the 10th small one of `raw` and of `cleaned`, so it
 *    compacts both (1,000,000 rows each), as the original update at that place did: the replay
 *    redoes that update's work, compaction included.
 */

const UPDATES = 10;

function definition(landingUri: string, autoCompact: boolean) {
  const properties = autoCompact ? {} : { properties: { "delta.autoOptimize.autoCompact": "false" } };
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

async function fixture(totalRows: number, autoCompact = true): Promise<Fixture> {
  const h = new RewindHarness();
  await h.deploy(definition(h.landingUri, autoCompact));
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

export async function run(): Promise<void> {
  const small = await fixture(10_000);
  const large = await fixture(1_000_000);

  // 1. Rewind time vs data size.
  await rewindTime(small, 1); // warm-up
  const smallMs = await rewindTime(small);
  const largeMs = await rewindTime(large);
  console.log(
    `rewind of 3 datasets: 10,000 rows ${smallMs.toFixed(1)} ms, 1,000,000 rows ${largeMs.toFixed(1)} ms, ratio ${(largeMs / smallMs).toFixed(2)} (target <= 1.2)`,
  );

  // 2 and 3. Point at 90% of the history: rewind there, replay; then a full refresh of everything.
  await large.h.rewind({ rewind_point_id: large.points[UPDATES - 1]!.rewindPointId }); // back to the latest timeline
  await replayFigures(large, "auto-compaction on (the default)");
  await replayFigures(await fixture(1_000_000, false), "auto-compaction off");
}

async function replayFigures(f: Fixture, label: string): Promise<void> {
  const { h, points, rowsPerUpdate } = f;
  await h.rewind({ rewind_point_id: points[UPDATES - 2]!.rewindPointId });
  const replay = await timed(() => h.run());
  const arrivedAfterPoint = rowsPerUpdate * 2; // the last file reaches raw, then cleaned
  const rowsRead = Object.values(replay.value.flows).reduce((n, flow) => n + flow.rowsIn, 0);
  console.log(`${label}:`);
  console.log(
    `  replay reads ${rowsRead} rows for ${arrivedAfterPoint} arrived after the point (raw ${replay.value.flows["ingest"]?.rowsIn}, cleaned ${replay.value.flows["clean"]?.rowsIn}): ratio ${(rowsRead / arrivedAfterPoint).toFixed(2)} (target 1.00)`,
  );
  const idle = await timed(() => h.run());
  const refresh = await timed(() => h.refresh({ full_refresh: true }));
  console.log(
    `  replay from the point at 90%: ${replay.ms.toFixed(0)} ms; full refresh: ${refresh.ms.toFixed(0)} ms; ratio ${(replay.ms / refresh.ms).toFixed(3)} (target <= 0.2; <= 0.1 with the view kept incrementally)`,
  );
  const view = (update: typeof replay.value) => update.views["totals"]?.refresh ?? "unchanged";
  console.log(`  the view totals: replay ${view(replay.value)}; full refresh ${view(refresh.value)}`);
  // Both include the engine's fixed cost of an update (listing, snapshots, materialized view).
  console.log(
    `  an update with nothing new: ${idle.ms.toFixed(0)} ms; without it the ratio is ${((replay.ms - idle.ms) / (refresh.ms - idle.ms)).toFixed(3)}`,
  );
}
