import type { CrashPoint } from "../../shared/engine/crash-points.ts";
import type { ValidatedPipeline } from "../../shared/pipeline/validate-pipeline.ts";
import { jsonLines, type EngineHarness } from "../integration/engine/engine-harness.ts";

/**
 * The pipeline spark-crash.test.ts crashes, and the steps it takes it through. One pipeline holds a
 * flow of each kind, each reading its own landing folder, so a step lands files for the flows it
 * crashes only and no other flow runs a batch that could reach the crash point first:
 *
 * - `raw` (flow `ingest`, auto_loader) and `clean` (flow `tidy`, streaming from `raw`): plain flows;
 * - `totals`: a materialized view kept incrementally (a GROUP BY over `raw`), recomputed in full on
 *   Spark at its first load and on a full refresh (its rows and partials: spark-view-refresh.ts);
 * - `history` (flow `apply`): AUTO CDC, SCD type 2, sequences arriving out of order;
 * - `attributed` (flow `attribute`): a stream-stream LEFT OUTER join of `clicks` and `impressions`
 *   (its state tables `join_left` and `join_right`);
 * - `kinds` (flow `by_kind`): a windowed aggregation (`windows`, a DISTINCT aggregate's set too).
 */

export const TABLES = ["raw", "clean", "totals", "history", "clicks", "impressions", "attributed", "kinds"];
/** The stateful flows whose state is compared with the DuckDB-only run's, and the dataset each writes. */
export const STATEFUL_FLOWS = { attribute: "attributed", by_kind: "kinds" } as const;
export const VIEW = "totals";

export function crashPipeline(
  harness: EngineHarness,
  engine: "duckdb" | "spark",
): Promise<ValidatedPipeline> {
  const autoLoader = (folder: string, schema: Record<string, string>) => ({
    type: "auto_loader",
    path: `${harness.landingUri}${folder}/`,
    format: "json",
    schema,
  });
  const feed = (name: string) => ({
    type: "streaming_table",
    name,
    flows: [
      {
        name: `land_${name}`,
        source: autoLoader(name, { id: "VARCHAR", ad: "VARCHAR", ts: "TIMESTAMP" }),
        sql: "SELECT id, ad, ts FROM source",
      },
    ],
  });
  const ids = { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" };
  return harness.validate({
    name: "spark crash",
    catalog: "main",
    schema: `spark_crash_${engine}`,
    configuration: { "pipelines.engine": engine },
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        flows: [
          {
            name: "ingest",
            source: autoLoader("raw", ids),
            sql: "SELECT id, amount, region FROM source",
            options: { max_files_per_batch: 1 },
          },
        ],
      },
      {
        type: "streaming_table",
        name: "clean",
        flows: [
          {
            name: "tidy",
            source: { type: "stream", dataset: "raw" },
            sql: "SELECT id, id * 10 AS tens FROM source",
          },
        ],
      },
      {
        type: "materialized_view",
        name: VIEW,
        sql: "SELECT region, count(*) AS n, sum(amount) AS total, max(id) AS top FROM raw GROUP BY region",
      },
      {
        type: "streaming_table",
        name: "history",
        flows: [
          {
            name: "apply",
            source: autoLoader("cdc", ids),
            sql: "SELECT region, id, amount FROM source",
            options: { max_files_per_batch: 1 },
            auto_cdc: { keys: ["region"], sequence_by: "id", stored_as_scd_type: 2 },
          },
        ],
      },
      feed("clicks"),
      feed("impressions"),
      {
        type: "streaming_table",
        name: "attributed",
        flows: [
          {
            name: "attribute",
            source: { type: "stream", dataset: "clicks" },
            watermark: { column: "ts", delay: "5 minutes" },
            join: { stream: "impressions", watermark: { column: "ts", delay: "5 minutes" } },
            sql:
              "SELECT c.id AS click, i.id AS impression, c.ts AS click_ts FROM source c LEFT JOIN impressions i " +
              "ON c.ad = i.ad AND c.ts BETWEEN i.ts AND i.ts + INTERVAL 10 MINUTES",
          },
        ],
      },
      {
        type: "streaming_table",
        name: "kinds",
        flows: [
          {
            name: "by_kind",
            source: autoLoader("kinds", { id: "BIGINT", kind: "VARCHAR", ts: "TIMESTAMP" }),
            watermark: { column: "ts", delay: "10 minutes" },
            sql:
              "SELECT window.start AS start, kind, count(*) AS n, sum(id) AS ids, count(DISTINCT id) AS ids_seen " +
              "FROM source GROUP BY window(ts, '10 minutes', '5 minutes'), kind",
          },
        ],
      },
    ],
  });
}

/** How a step's first update dies (its retry, the next update, then converges). */
export type StepCrash =
  /** Ebb crashes at a point of the micro-batch protocol (crash-points.ts), at the first batch reaching it. */
  | { readonly kind: "point"; readonly point: CrashPoint; readonly vacuumBeforeRetry?: boolean }
  /**
   * Ebb crashes writing the materialized view's table commit once its job ended: the job's rows and
   * partials, and Ebb's state version of them, are written; the commit is not.
   */
  | { readonly kind: "commit"; readonly view: string }
  /** The Spark driver is killed once a file shows in the flow's job's table (or state) staging folder. */
  | { readonly kind: "kill"; readonly flow: string; readonly folder: "table" | "state" }
  /** Not a crash: the flow's job runs again for the same request (the state machine's retry), the update completes. */
  | { readonly kind: "rerun"; readonly flow: string };

export interface CrashStep {
  readonly title: string;
  /** Files landed before the step's update: `key` under the landing folder, and its text. */
  readonly land: readonly (readonly [key: string, text: string])[];
  /** The update's request (both the crashed one and its retry). */
  readonly request?: Record<string, unknown>;
  readonly crash?: StepCrash;
  /** The datasets whose staging (and state) VACUUM must leave without orphans after the step. */
  readonly vacuum: readonly string[];
  /** Whether the dead attempt left orphans there (files VACUUM removes). */
  readonly orphans?: boolean;
}

const at = (minute: number) =>
  `2026-01-01 ${String(12 + Math.floor(minute / 60))}:${String(minute % 60).padStart(2, "0")}:00`;
const lines = (rows: readonly object[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
const click = (id: string, ad: string, minute: number) => ({ id, ad, ts: at(minute) });
const kind = (id: number, k: string, minute: number) => ({ id, kind: k, ts: at(minute) });

/**
 * The steps. After each, every table, the stateful flows' state and the view's partials equal the
 * DuckDB-only run's after the same step, and the next step continues from what the retry wrote.
 */
export const STEPS: readonly CrashStep[] = [
  {
    title: "the first update (every flow's first batch, the view's first load on Spark)",
    land: [
      ["raw/f0.json", jsonLines(1, 3)],
      ["cdc/f0.json", jsonLines(7, 3)],
      // i1 and c1 wait (c1's ad has no impression yet).
      ["impressions/f0.json", lines([click("i1", "a", 0)])],
      ["clicks/f0.json", lines([click("c1", "z", 5)])],
      ["kinds/f0.json", lines([kind(1, "a", 1), kind(2, "b", 7), kind(1, "a", 12)])],
    ],
    vacuum: TABLES.filter((table) => table !== "history"),
  },
  // Plain flows: the crashed batch is `ingest`'s; `tidy` and the view's incremental refresh follow in the retry.
  ...(
    [
      { point: "after-plan", from: 4 },
      // The job wrote its files and manifest; Ebb died before committing them: the retry's new attempt
      // writes its own, and the dead attempt's are unreferenced (here VACUUM removes them first).
      { point: "after-data-files", from: 7, vacuumBeforeRetry: true },
      { point: "after-table-commit", from: 10 },
      { point: "before-head-move", from: 13 },
    ] as const
  ).map(({ point, from, ...rest }, i): CrashStep => ({
    title: `a plain batch converges after a crash ${point}`,
    land: [[`raw/f${i + 1}.json`, jsonLines(from, 3)]],
    crash: { kind: "point", point, ...rest },
    vacuum: ["raw", "clean"],
  })),
  {
    // The committer's `_temporary` scratch shows first: the dead job's files are orphans.
    title: "a plain batch converges after the Spark driver is killed while its job writes",
    land: [["raw/f5.json", jsonLines(16, 3)]],
    crash: { kind: "kill", flow: "ingest", folder: "table" },
    vacuum: ["raw", "clean"],
    orphans: true,
  },
  // An AUTO CDC batch writes the next state version before its MERGE: a retry after the commit runs the
  // job again and rewrites the same state (the MERGE is not applied twice). Older sequences arrive late.
  ...(
    [
      ["after-data-files", 1],
      ["after-table-commit", 10],
      ["before-head-move", 4],
    ] as const
  ).map(([point, from], i): CrashStep => ({
    title: `an AUTO CDC (SCD type 2) batch converges after a crash ${point}`,
    land: [[`cdc/f${i + 1}.json`, jsonLines(from, 3)]],
    crash: { kind: "point", point },
    // Not checked (nor before): after VACUUM its staging folder still held files HEAD does not
    // reference (3, 5, 7 after these steps in one run; a MERGE's removed files, not yet explained).
    vacuum: [],
  })),
  // The join: the crashed batch pairs with rows waiting in the state, lets some go, and keeps others
  // the next batch pairs with.
  {
    // c2 pairs with i1 from the state; the watermark (12:45) lets c1 go (a LEFT OUTER row) and i1.
    title: "a stream-stream join batch converges after a crash after-state-write",
    land: [
      ["impressions/f1.json", lines([click("i2", "b", 45)])],
      ["clicks/f1.json", lines([click("c2", "a", 8), click("c3", "b", 50)])],
    ],
    crash: { kind: "point", point: "after-state-write" },
    vacuum: ["attributed"],
    orphans: true,
  },
  {
    // c4 pairs with i2, which the retried batch kept.
    title:
      "a stream-stream join batch converges after the Spark driver is killed while its job writes the state",
    land: [
      ["impressions/f2.json", lines([click("i3", "y", 90)])],
      ["clicks/f2.json", lines([click("c4", "b", 52)])],
    ],
    crash: { kind: "kill", flow: "attribute", folder: "state" },
    vacuum: ["attributed"],
  },
  // The windowed aggregation: each batch continues open windows, completes some, opens new ones.
  ...(
    [
      // The job not started; the watermark (12:21) completes the first windows.
      ["after-plan", [kind(3, "a", 13), kind(4, "b", 31), kind(3, "a", 14)], false],
      // The state version written, the commit not made.
      ["after-state-write", [kind(5, "b", 33), kind(6, "a", 60)], true],
      // The commit found: the retry runs the job again for the state the checkpoint names.
      ["after-table-commit", [kind(7, "b", 62), kind(8, "a", 75)], true],
    ] as const
  ).map(([point, rows, orphans], i): CrashStep => ({
    title: `a windowed aggregation batch converges after a crash ${point}`,
    land: [[`kinds/f${i + 1}.json`, lines(rows)]],
    crash: { kind: "point", point },
    vacuum: ["kinds"],
    orphans,
  })),
  {
    title:
      "a windowed aggregation batch converges after the Spark driver is killed while its job writes the state",
    land: [["kinds/f4.json", lines([kind(9, "a", 80), kind(10, "b", 95), kind(9, "a", 81)])]],
    crash: { kind: "kill", flow: "by_kind", folder: "state" },
    vacuum: ["kinds"],
  },
  {
    // The state machine retries its startJobRun.sync state on the service's internal errors
    // (ebb-spark-engine.ts): a second job of the same request (the same attempt's staging folders) may
    // run after the first one wrote. It writes beside the first run's files, and its manifest names
    // only its own; VACUUM removes the first run's.
    title: "a windowed batch whose job runs again for the same request converges",
    land: [["kinds/f5.json", lines([kind(11, "a", 100), kind(12, "b", 118)])]],
    crash: { kind: "rerun", flow: "by_kind" },
    vacuum: ["kinds"],
    orphans: true,
  },
  {
    title: "the join and the windows continue from the state their retries wrote",
    land: [
      // c5 pairs with i3, kept by the batch whose driver was killed and retried.
      ["impressions/f3.json", lines([click("i4", "c", 120)])],
      ["clicks/f3.json", lines([click("c5", "y", 95)])],
      ["kinds/f6.json", lines([kind(13, "a", 130), kind(14, "b", 104)])],
    ],
    vacuum: ["attributed", "kinds"],
  },
  // The view's full recompute on Spark (a full refresh of it alone): the job writes its rows and its
  // partials (in Ebb's state layout), Ebb the partials' state version, then the commit.
  {
    title: "a materialized view's recompute on Spark converges after a crash before its commit",
    land: [],
    request: { full_refresh_selection: [VIEW] },
    crash: { kind: "commit", view: VIEW },
    vacuum: [VIEW],
    orphans: true,
  },
  {
    title:
      "a materialized view's recompute on Spark converges after the Spark driver is killed while its job writes",
    land: [],
    request: { full_refresh_selection: [VIEW] },
    crash: { kind: "kill", flow: `view.${VIEW}`, folder: "state" },
    vacuum: [VIEW],
  },
  {
    // An incremental refresh on DuckDB continues from the partials the retried recompute wrote.
    title: "the view refreshes incrementally from the partials the retried recompute wrote",
    land: [["raw/f6.json", jsonLines(19, 4)]],
    vacuum: ["raw", "clean", VIEW],
  },
];

/** The SCD type 2 history of the ids landed for `history` (keyed by region, sequenced by id). */
export function scd2History(ids: readonly number[]) {
  const regions = ["eu", "us", "apac"];
  return ["apac", "eu", "us"].flatMap((region) => {
    const mine = [...ids].sort((a, b) => a - b).filter((id) => regions[id % 3] === region);
    return mine.map((id, i) => ({ region, id, start: id, end: mine[i + 1] ?? null }));
  });
}
