import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { twinPipelines, twinStep } from "./twin-pipelines.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * Stateful flows and partitioned tables on the Spark engine, through the HTTP API on the local
 * runtime, on real Spark (functions/spark/setup.sh; run.sh exports EBB_SPARK_PYTHON and EBB_SPARK_JARS).
 *
 * Equivalence: twin pipelines get the same files; one runs every batch on DuckDB, the other each
 * update on an engine fast-check picks, with rewinds to a random earlier point (also across a switch)
 * and replays. After each update both pipelines' tables hold the same rows, and every stateful flow's
 * state version (read through the state reader: its tables, rows and watermark) is the same: the
 * two engines read and write one state layout with one bucket hash (`fib32` for the integer key,
 * `md5-json` for the string key and for a window's start and keys, a start at a fraction of a second
 * too), so a key or an open window one engine remembered (with its DISTINCT aggregates' sets of values)
 * is found and continued by the other. The twins: twin-pipelines.ts.
 */

const definition = (landing: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "events",
      // Hive-style folders on both engines; partition values as Delta spells them (a date, a string
      // with characters a path escapes, NULL).
      partition_by: ["day", "kind"],
      flows: [
        {
          name: "ingest",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql: "SELECT id, user, ts, kind, CAST(ts AS DATE) AS day FROM source",
          options: { max_files_per_batch: 2 },
        },
      ],
    },
    {
      // Deduplication by an integer key (fib32) straight from the files: the first row in arrival order
      // (file, then line) survives, whichever engine reads them.
      type: "streaming_table",
      name: "first_by_id",
      flows: [
        {
          name: "dedup_ids",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql: "SELECT id, user, ts FROM source",
          drop_duplicates: { keys: ["id"] },
          options: { max_files_per_batch: 3 },
        },
      ],
    },
    {
      // Deduplication by a string key (md5-json) within the watermark. From the files too: the rows of
      // one commit of a partitioned table have no order between its files, so which of two duplicates
      // in one batch is first would be either engine's choice.
      type: "streaming_table",
      name: "first_by_user",
      flows: [
        {
          name: "dedup_users",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql: "SELECT user, ts, id FROM source",
          watermark: { column: "ts", delay: "30 minutes" },
          drop_duplicates: { keys: ["user"], within_watermark: true },
        },
      ],
    },
    {
      // A watermark alone, from the partitioned table: late rows dropped, the watermark kept in the state.
      type: "streaming_table",
      name: "on_time",
      flows: [
        {
          name: "drop_late",
          source: { type: "stream", dataset: "events" },
          sql: "SELECT id, ts FROM source",
          watermark: { column: "ts", delay: "20 minutes" },
        },
      ],
    },
    {
      // Sliding windows per user (md5-json buckets of the window's start and a string key, NULL too),
      // every aggregate the Spark job keeps: a window is written once, when the watermark passes it.
      type: "streaming_table",
      name: "user_windows",
      flows: [
        {
          name: "windows_by_user",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql:
            "SELECT window.start AS start, user, count(*) AS n, sum(id) AS ids, min(ts) AS first_ts, " +
            "max(id) AS top, avg(id) AS mean_id FROM source WHERE id < 11 GROUP BY window(ts, '10 minutes', '5 minutes'), user",
          watermark: { column: "ts", delay: "10 minutes" },
        },
      ],
    },
    {
      // Tumbling windows from the partitioned table, the window selected whole (a struct).
      type: "streaming_table",
      name: "kind_windows",
      flows: [
        {
          name: "windows_by_kind",
          source: { type: "stream", dataset: "events" },
          sql: "SELECT window, kind, count(*) AS n FROM source GROUP BY window(ts, '20 minutes'), kind",
          watermark: { column: "ts", delay: "15 minutes" },
        },
      ],
    },
    {
      // DISTINCT aggregates (the window's state keeps each one's sorted set of values, NULL dropped),
      // one with FILTER, in sliding windows of a sub-second slide: half the windows start at a
      // fraction of a second (12:01:15.5), a key hashed in its JSON text, which both engines spell
      // as DuckDB does. A long delay keeps the Spark batch's windows open for the DuckDB batch after.
      type: "streaming_table",
      name: "distinct_kinds",
      flows: [
        {
          name: "distinct_windows",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql:
            "SELECT window.start AS start, kind, count(DISTINCT user) AS users, sum(DISTINCT id) AS ids, " +
            "avg(DISTINCT id) AS mean_id, count(DISTINCT id) FILTER (WHERE user IS NOT NULL) AS known_ids, " +
            "count(*) AS n FROM source GROUP BY window(ts, '10 minutes', '150500 milliseconds'), kind",
          watermark: { column: "ts", delay: "30 minutes" },
        },
      ],
    },
  ],
});
const SCHEMA = { id: "BIGINT", user: "VARCHAR", ts: "TIMESTAMP", kind: "VARCHAR" };
const STATEFUL_FLOWS = [
  "dedup_ids",
  "dedup_users",
  "drop_late",
  "windows_by_user",
  "windows_by_kind",
  "distinct_windows",
];
const TABLES = [
  "events",
  "first_by_id",
  "first_by_user",
  "on_time",
  "user_windows",
  "kind_windows",
  "distinct_kinds",
];
const USERS = ["u1", "u2", "ü/3", "u 4", null];
const KINDS = ["a", "b/c", "d:e", null];

/** `minute`: the event time's offset from the file's own time; null: a row without one (always late). */
type Row = { id: number; user: string | null; minute: number | null; kind: string | null };

describe.skipIf(!sparkEngineReady)("stateful flows and partitioned tables on the Spark engine", () => {
  let cp: TestControlPlane;
  const twins = twinPipelines(() => cp);

  beforeAll(async () => {
    cp = await startTestControlPlane();
  }, 240_000);
  afterAll(async () => cp?.close());

  it("gives the same tables and state versions as DuckDB alone, whichever engine runs each update, across rewinds", async () => {
    const row: fc.Arbitrary<Row> = fc.record({
      id: fc.integer({ min: 1, max: 12 }),
      user: fc.constantFrom(...USERS),
      // Event times mostly moving forward (the file's place), some far behind: late rows.
      minute: fc.option(fc.integer({ min: -60, max: 25 }), { freq: 8 }),
      kind: fc.constantFrom(...KINDS),
    });
    const first: Row = { id: 1, user: "u1", minute: 0, kind: "a" };
    const again: Row[] = [first, { ...first, id: 2, user: "u 4", kind: null }];
    // The last batch's rows fall in windows the batch before (on Spark) left open.
    const later = again.map((r) => ({ ...r, minute: -5 }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(twinStep(fc.array(row, { minLength: 1, maxLength: 5 })), { minLength: 1, maxLength: 3 }),
        (steps) =>
          twins.play(
            {
              catalog: "spark_st",
              name: "spark stateful",
              definition,
              tables: TABLES,
              lines: (rows, file) => {
                const base = Date.UTC(2026, 0, 1, 12) + file * 10 * 60_000;
                return rows.map((r) =>
                  JSON.stringify({
                    id: r.id,
                    user: r.user,
                    ts:
                      r.minute === null
                        ? null
                        : new Date(base + r.minute * 60_000).toISOString().slice(0, 19),
                    kind: r.kind,
                  }),
                );
              },
              check: async ({ duck, mixed }, what) => {
                for (const flow of STATEFUL_FLOWS)
                  expect(await twins.flowState(mixed.id, flow), `${flow}'s state after ${what}`).toEqual(
                    await twins.flowState(duck.id, flow),
                  );
              },
            },
            // Every sequence starts with a batch on DuckDB and ends with one on Spark and one on DuckDB,
            // each with keys (and windows) the state already holds: each engine looks up keys the other
            // remembered.
            [
              { kind: "land", rows: [first] },
              { kind: "update", engine: "duckdb" },
              ...steps,
              { kind: "land", rows: again },
              { kind: "update", engine: "spark" },
              { kind: "land", rows: later },
              { kind: "update", engine: "duckdb" },
            ],
          ),
      ),
      { numRuns: Number(process.env["EBB_SPARK_STATEFUL_RUNS"] ?? 1), endOnFailure: true },
    );
  }, 1_500_000);

  it("gives the same tables, join state and join figures as DuckDB alone for stream-stream joins, batches alternating engines, across a rewind over a switch", async () => {
    const row: fc.Arbitrary<JoinRow> = fc.record({
      kind: fc.constantFrom("click" as const, "imp" as const),
      ad: fc.constantFrom(1, 2, 3, null),
      // Mostly moving forward with the file, some far behind (late on either side), some without a time.
      minute: fc.option(fc.integer({ min: -70, max: 25 }), { freq: 8 }),
    });
    const pair: JoinRow[] = [
      { kind: "imp", ad: 1, minute: 0 },
      { kind: "click", ad: 1, minute: 5 },
      { kind: "click", ad: 2, minute: 6 },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.array(twinStep(fc.array(row, { minLength: 1, maxLength: 5 })), { minLength: 0, maxLength: 2 }),
        async (steps) => {
          // What the joins did (DuckDB's count, the mixed twin's equal): pairs, LEFT OUTER rows, late rows.
          const seen = { pairs: 0, outer: 0, late: 0 };
          await twins.play(
            {
              catalog: "spark_join",
              name: "spark joins",
              definition: joinDefinition,
              tables: JOIN_TABLES,
              lines: (rows, file) => {
                const base = Date.UTC(2026, 0, 1, 12) + file * 10 * 60_000;
                return rows.map((r, i) =>
                  JSON.stringify({
                    kind: r.kind,
                    id: file * 100 + i,
                    ad_id: r.ad,
                    ts:
                      r.minute === null
                        ? null
                        : new Date(base + r.minute * 60_000).toISOString().slice(0, 19),
                  }),
                );
              },
              check: async ({ duck, mixed }, what) => {
                for (const flow of JOIN_FLOWS)
                  expect(await twins.flowState(mixed.id, flow), `${flow}'s state after ${what}`).toEqual(
                    await twins.flowState(duck.id, flow),
                  );
                // Pairs, LEFT OUTER rows and late rows per batch, as each engine counted them.
                const figures = async (twin: { id: string; update: string }) =>
                  (await twins.progress(twin.id, twin.update))
                    .flatMap((p) => {
                      const operators = (p as { state_operators?: Record<string, unknown> }).state_operators;
                      if (!JOIN_FLOWS.includes(p.flow ?? "") || !operators) return [];
                      const { state_version: _, state_bytes: __, ...counts } = operators;
                      return [{ flow: p.flow, ...counts }];
                    })
                    // The two join flows run side by side: their events interleave either way.
                    .sort((a, b) => (a.flow ?? "").localeCompare(b.flow ?? ""));
                const counted = await figures(duck);
                expect(await figures(mixed), `join figures after ${what}`).toEqual(counted);
                for (const c of counted as Record<string, unknown>[]) {
                  seen.pairs += Number(c["num_joined_rows"] ?? 0);
                  seen.outer += Number(c["num_left_outer_rows"] ?? 0);
                  seen.late += Number(c["num_rows_dropped_by_watermark"] ?? 0);
                }
              },
            },
            // Batches alternate engines with rows waiting in the state from the other engine; the
            // rewind goes back over a switch (to the DuckDB batch's point) and replays on Spark.
            [
              { kind: "land", rows: pair },
              { kind: "update", engine: "duckdb" },
              {
                kind: "land",
                rows: [
                  { kind: "imp", ad: 2, minute: -3 },
                  { kind: "click", ad: null, minute: 1 },
                ],
              },
              { kind: "update", engine: "spark" },
              ...steps,
              {
                kind: "land",
                rows: [
                  { kind: "click", ad: 1, minute: 0 },
                  { kind: "imp", ad: 3, minute: 0 },
                ],
              },
              { kind: "update", engine: "duckdb" },
              {
                kind: "land",
                rows: [
                  { kind: "click", ad: 3, minute: 2 },
                  { kind: "imp", ad: 1, minute: -80 },
                ],
              },
              { kind: "update", engine: "spark" },
              { kind: "rewind", back: 2, engine: "spark" },
              // The watermark passes the first rows on Spark: it lets go of rows DuckDB kept (LEFT OUTER
              // rows written for the unmatched); DuckDB then continues what Spark kept.
              {
                kind: "land",
                rows: [
                  { kind: "imp", ad: 2, minute: 60 },
                  { kind: "click", ad: 2, minute: 61 },
                ],
              },
              { kind: "update", engine: "spark" },
              {
                kind: "land",
                rows: [
                  { kind: "click", ad: 2, minute: 0 },
                  { kind: "imp", ad: 1, minute: 5 },
                ],
              },
              { kind: "update", engine: "duckdb" },
            ],
          );
          expect(seen.pairs).toBeGreaterThan(0);
          expect(seen.outer).toBeGreaterThan(0);
          expect(seen.late).toBeGreaterThan(0);
        },
      ),
      { numRuns: Number(process.env["EBB_SPARK_JOIN_RUNS"] ?? 1), endOnFailure: true },
    );
  }, 1_500_000);
});

/**
 * Stream-stream joins between two streaming tables of the files (one file per batch, so either
 * engine writes each batch's rows in the file's order and the sides arrive alike): a LEFT OUTER join
 * (BETWEEN, `INTERVAL 1 HOUR`) and an INNER one (`>=`/`<=`, `INTERVAL '30 minutes'`), NULL keys.
 */
const joinDefinition = (landing: string) => {
  const ingest = (name: string, kind: string) => ({
    type: "streaming_table",
    name,
    flows: [
      {
        name: `ingest_${name}`,
        source: { type: "auto_loader", path: landing, format: "json", schema: JOIN_SCHEMA },
        sql: `SELECT id, ad_id, ts FROM source WHERE kind = '${kind}'`,
        options: { max_files_per_batch: 1 },
      },
    ],
  });
  const joined = (name: string, flow: string, sql: string) => ({
    type: "streaming_table",
    name,
    flows: [
      {
        name: flow,
        source: { type: "stream", dataset: "clicks" },
        watermark: { column: "ts", delay: "10 minutes" },
        join: { stream: "impressions", watermark: { column: "ts", delay: "20 minutes" } },
        sql,
      },
    ],
  });
  return {
    datasets: [
      ingest("clicks", "click"),
      ingest("impressions", "imp"),
      joined(
        "attributed",
        "attribute",
        "SELECT c.id AS click_id, c.ad_id, c.ts AS click_ts, i.id AS imp_id, i.ts AS imp_ts FROM source c " +
          "LEFT JOIN impressions i ON c.ad_id = i.ad_id AND c.ts BETWEEN i.ts AND i.ts + INTERVAL 1 HOUR",
      ),
      joined(
        "matched",
        "match_inner",
        "SELECT c.id AS click_id, i.id AS imp_id, c.ts AS click_ts FROM source AS c JOIN impressions AS i " +
          "ON c.ad_id = i.ad_id AND c.ts >= i.ts - INTERVAL '10 minutes' AND c.ts <= i.ts + INTERVAL '30 minutes'",
      ),
    ],
  };
};
const JOIN_SCHEMA = { kind: "VARCHAR", id: "BIGINT", ad_id: "BIGINT", ts: "TIMESTAMP" };
const JOIN_FLOWS = ["attribute", "match_inner"];
const JOIN_TABLES = ["clicks", "impressions", "attributed", "matched"];
/** A click or an impression of an ad (null: no key); `minute` as in `Row`. */
type JoinRow = { kind: "click" | "imp"; ad: number | null; minute: number | null };
