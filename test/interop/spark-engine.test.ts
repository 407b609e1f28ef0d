import fc from "fast-check";
import { mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { twinsOnControlPlane, twinStep, type Engine } from "./twin-pipelines.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * The Spark engine through the HTTP API on the local runtime, on real Spark (the pinned local driver,
 * functions/spark/setup.sh; run.sh exports EBB_SPARK_PYTHON and EBB_SPARK_JARS).
 *
 * Equivalence: twin pipelines get the same files; one runs every batch on DuckDB, the other each
 * update on an engine fast-check picks (switching `pipelines.engine` between updates), with rewinds
 * to a random earlier point (also across a switch) and replays. After each update both pipelines'
 * tables hold the same rows, and the same data quality counts. The pipeline has a dataset with
 * expectations (warn and drop) and AUTO CDC targets of SCD type 1 and 2 (a few keys, sequences out of
 * order and tied across files, deletes, an untracked column), so a rewind across a switch restores
 * per-key state one engine wrote for the other to continue from.
 */

const SQL_RAW = "SELECT id, upper(name) AS name, id * 2 AS twice, k, seq, op FROM source";
const SQL_CLEAN = "SELECT id, name, twice + 1 AS bumped FROM source WHERE id % 3 <> 0";

const definition = (landing: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "ingest",
          source: {
            type: "auto_loader",
            path: landing,
            format: "json",
            schema: { id: "BIGINT", name: "VARCHAR", k: "BIGINT", seq: "BIGINT", op: "VARCHAR" },
          },
          sql: SQL_RAW,
          options: { max_files_per_batch: 2 },
        },
      ],
      expectations: [
        { name: "named", condition: "name IS NOT NULL", on_violation: "warn" },
        { name: "not_seventh", condition: "id % 7 <> 0", on_violation: "drop" },
      ],
    },
    {
      type: "streaming_table",
      name: "current",
      flows: [
        {
          name: "current_cdc",
          source: { type: "stream", dataset: "raw" },
          sql: "SELECT k, seq, name, op FROM source",
          auto_cdc: {
            keys: ["k"],
            sequence_by: "seq",
            apply_as_deletes: "op = 'DELETE'",
            except_column_list: ["op"],
            stored_as_scd_type: 1,
          },
        },
      ],
    },
    {
      type: "streaming_table",
      name: "history",
      flows: [
        {
          name: "history_cdc",
          source: { type: "stream", dataset: "raw" },
          sql: "SELECT k, seq, name, twice, op FROM source",
          auto_cdc: {
            keys: ["k"],
            sequence_by: "seq",
            apply_as_deletes: "op = 'DELETE'",
            except_column_list: ["op"],
            track_history_column_list: ["name"],
            stored_as_scd_type: 2,
          },
        },
      ],
    },
    {
      type: "streaming_table",
      name: "clean",
      flows: [{ name: "tidy", source: { type: "stream", dataset: "raw" }, sql: SQL_CLEAN }],
    },
    // A materialized view over a table Spark wrote: recomputed by Ebb whichever engine wrote its input.
    {
      type: "materialized_view",
      name: "by_name",
      sql: "SELECT name IS NULL AS unnamed, count(*) AS n, sum(bumped) AS total FROM clean GROUP BY ALL",
    },
  ],
});

/** run.sh sets up the engine's own Spark (EMR's versions, functions/spark/setup.sh) and exports its paths. */

describe.skipIf(!sparkEngineReady)("the Spark engine", () => {
  let nextId = 1;
  const twins = twinsOnControlPlane();
  const cp = twins.cp;

  /** The data quality counts of the update's batches of `raw`, in batch order. */
  const quality = async (pipelineId: string, updateId: string) =>
    (await twins.progress(pipelineId, updateId))
      .filter((p) => p.flow === "ingest" && p.engine !== undefined)
      .map((p) => p.data_quality);
  // Four keys, sequences out of arrival order and tied across files, a delete now and then.
  const event = (id: number) => ({
    id,
    name: id % 4 === 0 ? null : `n${id % 3}`,
    k: (id * 5) % 4,
    seq: (id * 7) % 11,
    op: id % 6 === 0 ? "DELETE" : "UPSERT",
  });

  it("gives the same tables as DuckDB alone, whichever engine runs each update, across rewinds and replays", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(twinStep(fc.integer({ min: 1, max: 4 })), { minLength: 3, maxLength: 6 }),
        (steps) =>
          twins.play(
            {
              catalog: "spark_eq",
              name: "spark equivalence",
              definition,
              tables: ["raw", "clean", "by_name", "current", "history"],
              // Its incremental refreshes run on DuckDB whatever the engine (spark/view-engine-choice.ts).
              duckDbOnly: ["by_name"],
              lines: (rows) => Array.from({ length: rows }, () => JSON.stringify(event(nextId++))),
              check: async ({ duck, mixed }, what) =>
                expect(await quality(mixed.id, mixed.update), `data quality after ${what}`).toEqual(
                  await quality(duck.id, duck.update),
                ),
            },
            // Every sequence starts with a file (the view reads clean, which has no table before one)
            // and ends with files and an update on Spark: the property always meets Spark.
            [
              { kind: "land", rows: 1 },
              ...steps,
              { kind: "land", rows: 2 },
              { kind: "update", engine: "spark" },
            ],
          ),
      ),
      { numRuns: Number(process.env["EBB_SPARK_EQUIVALENCE_RUNS"] ?? 1), endOnFailure: true },
    );
  }, 1_500_000);

  it("fails a batch on Spark whose rows fail a `fail` expectation, or whose condition is no boolean, as DuckDB does", async () => {
    const landing = await mkdtemp(path.join(cp().landing, "fail-"));
    await writeFile(path.join(landing, "a.json"), '{"id": 1, "name": "a"}\n{"id": 2, "name": null}\n');
    const failing = (engine: Engine, condition: string) => ({
      name: `spark expectation ${engine}`,
      catalog: "spark_eq",
      schema: `fail_${engine}_${condition.length}`,
      configuration: { "pipelines.engine": engine },
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            expectations: [
              { name: "positive", condition: "id > 0", on_violation: "warn" },
              { name: "named", condition, on_violation: "fail" },
            ],
            flows: [
              {
                name: "ingest",
                source: {
                  type: "auto_loader",
                  path: landing,
                  format: "json",
                  schema: { id: "BIGINT", name: "VARCHAR" },
                },
                sql: "SELECT id, name FROM source",
              },
            ],
          },
        ],
      },
    });
    const failed = async (engine: Engine, condition: string) => {
      const { pipeline_id } = await cp().client.createPipeline(failing(engine, condition));
      const { update_id } = await cp().client.startUpdate(pipeline_id, {});
      const update = await cp().client.waitForUpdate(pipeline_id, update_id, {
        intervalMs: 200,
        timeoutMs: 280_000,
      });
      expect(update.state).toBe("FAILED");
      return update.error;
    };
    for (const engine of ["duckdb", "spark"] as const) {
      const error = await failed(engine, "name IS NOT NULL");
      expect(error?.error_code).toBe("EXPECTATION_VIOLATION");
      expect(error?.message).toMatch(
        /flow "ingest" failed expectation "named" of dataset "raw" \(name IS NOT NULL\) on 1 row, e\.g\. \{"id":2/,
      );
      // A condition that is not a boolean is refused with the same code on both engines.
      const invalid = await failed(engine, "name");
      expect(invalid?.error_code).toBe("EXPECTATION_CONDITION_INVALID");
      expect(invalid?.message).toMatch(
        /expectation "named" of dataset "raw" is a (VARCHAR|string), not a boolean/,
      );
    }
  });
});
