import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { twinsOnControlPlane, twinStep } from "./twin-pipelines.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * Snapshot reads and materialized views on the Spark engine, through the HTTP API on the local
 * runtime, on real Spark (functions/spark/setup.sh; run.sh exports EBB_SPARK_PYTHON and
 * EBB_SPARK_JARS).
 *
 * Twin pipelines (twin-pipelines.ts): one runs every batch on DuckDB, the other each update on an
 * engine fast-check picks, with rewinds (also across a switch), replays and full refreshes. A
 * streaming flow joins its stream with a materialized view and a view (a stream-static join: the job
 * reads the version of each table Ebb planned, as files), and two materialized views are recomputed
 * in full (a window function; a join of a view and a view) on Spark in the Spark updates. After each
 * update both pipelines' tables hold the same rows, and every `flow_progress` event of a Spark update
 * names Spark.
 */

const SCHEMA = { id: "BIGINT", k: "BIGINT", amount: "BIGINT" };

const definition = (landing: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "ingest",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql: "SELECT id, k, amount FROM source",
          options: { max_files_per_batch: 2 },
        },
      ],
    },
    { type: "view", name: "big", sql: "SELECT id, k, amount FROM raw WHERE amount > 5" },
    {
      // No GROUP BY: every refresh is a full recompute (on Spark in a Spark update).
      type: "materialized_view",
      name: "ranked",
      sql: "SELECT id, k, CAST(row_number() OVER (PARTITION BY k ORDER BY id) AS BIGINT) AS place FROM raw",
    },
    {
      type: "materialized_view",
      name: "big_places",
      sql: "SELECT r.k, r.place, b.amount FROM ranked r JOIN big b ON r.id = b.id",
    },
    {
      // A stream-static join: each batch sees `ranked` and `raw` (through `big`) as they are when it runs.
      type: "streaming_table",
      name: "enriched",
      flows: [
        {
          name: "enrich",
          source: { type: "stream", dataset: "raw" },
          sql: "SELECT s.id, s.k, r.place, b.amount AS big_amount, (SELECT count(*) FROM ranked) AS ranked_rows FROM source s LEFT JOIN ranked r ON r.id = s.id LEFT JOIN big b ON b.id = s.id",
          options: { max_files_per_batch: 1 },
        },
      ],
    },
  ],
});

describe.skipIf(!sparkEngineReady)("snapshot reads and materialized views on the Spark engine", () => {
  let nextId = 1;
  const twins = twinsOnControlPlane();

  /** The flows whose batches (or refreshes) ran on Spark in the mixed twin. */
  const onSpark = new Set<string>();
  const row = (id: number) => ({ id, k: id % 3, amount: (id * 7) % 11 });

  it("gives the same tables as DuckDB alone, whichever engine runs each update, across rewinds, replays and full refreshes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(twinStep(fc.integer({ min: 1, max: 3 }), { fullRefresh: true }), {
          minLength: 3,
          maxLength: 6,
        }),
        (steps) =>
          twins.play(
            {
              catalog: "spark_views",
              name: "spark views",
              definition,
              tables: ["raw", "ranked", "big_places", "enriched"],
              lines: (rows) => Array.from({ length: rows }, () => JSON.stringify(row(nextId++))),
              check: async ({ mixed }) => {
                for (const p of await twins.progress(mixed.id, mixed.update))
                  if (p.engine === "spark" && p.flow) onSpark.add(p.flow);
              },
            },
            // The materialized views read raw, which has no table before a file; the property ends on
            // Spark, with a rewind and replay and a full refresh among its steps.
            [
              { kind: "land", rows: 2 },
              { kind: "update", engine: "duckdb" },
              ...steps,
              { kind: "land", rows: 2 },
              { kind: "rewind", back: 2, engine: "spark" },
              { kind: "land", rows: 1 },
              { kind: "refresh", engine: "spark" },
              { kind: "land", rows: 2 },
              { kind: "update", engine: "spark" },
            ],
          ),
      ),
      { numRuns: Number(process.env["EBB_SPARK_EQUIVALENCE_RUNS"] ?? 1), endOnFailure: true },
    );
    // The join's batches and both views' recomputes did run on Spark.
    expect([...onSpark].sort()).toEqual(["big_places", "enrich", "ingest", "ranked"]);
  }, 1_500_000);
});
