import fc from "fast-check";
import { mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";

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

type Engine = "duckdb" | "spark";
type Step =
  | { kind: "land"; rows: number }
  | { kind: "update"; engine: Engine }
  | { kind: "rewind"; back: number; engine: Engine };

/** run.sh sets up the engine's own Spark (EMR's versions, functions/spark/setup.sh) and exports its paths. */
const sparkEngineReady =
  process.env["EBB_SPARK_PYTHON"] !== undefined && process.env["EBB_SPARK_JARS"] !== undefined;

describe.skipIf(!sparkEngineReady)("the Spark engine", () => {
  let cp: TestControlPlane;
  let landings: { duck: string; mixed: string };
  let ids: { duck: string; mixed: string };
  let file = 0;
  let nextId = 1;
  let pipelines = 0;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  }, 240_000);
  afterAll(async () => cp?.close());

  const run = async (pipelineId: string, body: unknown = {}) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, {
      intervalMs: 200,
      timeoutMs: 280_000,
    });
    if (update.state !== "COMPLETED") {
      const { events } = await cp.client.events(pipelineId, {
        filter: `level = 'ERROR' AND origin.update_id = '${update_id}'`,
      });
      throw new Error(
        `update ${update_id} ${update.state}: ${JSON.stringify(events.map((e) => (e as { error?: unknown }).error))}`,
      );
    }
    return update_id;
  };
  const setEngine = async (pipelineId: string, landing: string, engine: Engine, schema: string) =>
    cp.client.editPipeline(pipelineId, {
      name: `spark equivalence ${schema}`,
      catalog: "spark_eq",
      schema,
      configuration: { "pipelines.rewind.enabled": "true", "pipelines.engine": engine },
      definition: definition(landing),
    });
  const rows = async (schema: string, table: string) =>
    (
      await cp.client.query(`spark_eq.${schema}.${table}`, {
        sql: "SELECT * FROM t ORDER BY ALL",
        limit: 10_000,
      })
    ).rows;
  const progress = async (pipelineId: string, updateId: string) => {
    const { events } = await cp.client.events(pipelineId, {
      filter: `event_type = 'flow_progress' AND origin.update_id = '${updateId}'`,
    });
    return events.map((e) => ({
      flow: (e.origin as { flow_name?: string }).flow_name,
      ...(e.details["flow_progress"] as { engine?: string; data_quality?: unknown }),
    }));
  };
  const engines = async (pipelineId: string, updateId: string) =>
    (await progress(pipelineId, updateId)).map((p) => p.engine).filter((engine) => engine !== undefined);
  /** The data quality counts of the update's batches of `raw`, in batch order. */
  const quality = async (pipelineId: string, updateId: string) =>
    (await progress(pipelineId, updateId))
      .filter((p) => p.flow === "ingest" && p.engine !== undefined)
      .map((p) => p.data_quality);

  const create = async (landing: string, schema: string) =>
    (
      await cp.client.createPipeline({
        name: `spark equivalence ${schema}`,
        catalog: "spark_eq",
        schema,
        configuration: { "pipelines.rewind.enabled": "true" },
        definition: definition(landing),
      })
    ).pipeline_id;

  it("gives the same tables as DuckDB alone, whichever engine runs each update, across rewinds and replays", async () => {
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant("land" as const), rows: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ kind: fc.constant("update" as const), engine: fc.constantFrom<Engine>("duckdb", "spark") }),
      fc.record({
        kind: fc.constant("rewind" as const),
        back: fc.integer({ min: 1, max: 3 }),
        engine: fc.constantFrom<Engine>("duckdb", "spark"),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 6 }), async (steps) => {
        const n = pipelines++;
        const schemas = { duck: `duck_${n}`, mixed: `mixed_${n}` };
        landings = {
          duck: await mkdtemp(path.join(cp.landing, "duck-")),
          mixed: await mkdtemp(path.join(cp.landing, "mixed-")),
        };
        ids = {
          duck: await create(landings.duck, schemas.duck),
          mixed: await create(landings.mixed, schemas.mixed),
        };
        const points: { duck: string; mixed: string }[] = [];
        const filesAtStart = file;
        const sparkRan: string[] = [];
        // Every sequence starts with a file (the view reads clean, which has no table before one)
        // and ends with files and an update on Spark: the property always meets Spark.
        for (const s of [
          { kind: "land", rows: 1 } as Step,
          ...steps,
          { kind: "land", rows: 2 } as Step,
          { kind: "update", engine: "spark" } as Step,
        ]) {
          if (s.kind === "land") {
            const batch = Array.from({ length: s.rows }, () => nextId++);
            // Four keys, sequences out of arrival order and tied across files, a delete now and then.
            const event = (id: number) => ({
              id,
              name: id % 4 === 0 ? null : `n${id % 3}`,
              k: (id * 5) % 4,
              seq: (id * 7) % 11,
              op: id % 6 === 0 ? "DELETE" : "UPSERT",
            });
            const lines = batch.map((id) => JSON.stringify(event(id))).join("\n") + "\n";
            const name = `f${String(file++).padStart(5, "0")}.json`;
            await writeFile(path.join(landings.duck, name), lines);
            await writeFile(path.join(landings.mixed, name), lines);
            continue;
          }
          await setEngine(ids.mixed, landings.mixed, s.engine, schemas.mixed);
          if (s.kind === "rewind") {
            const point = points.at(-Math.min(s.back, points.length));
            if (!point) continue;
            await run(ids.duck, { rewind_spec: { rewind_point_id: point.duck } });
            await run(ids.mixed, { rewind_spec: { rewind_point_id: point.mixed } });
          }
          const duckUpdate = await run(ids.duck);
          const updateId = await run(ids.mixed);
          if (s.engine === "spark") sparkRan.push(...(await engines(ids.mixed, updateId)));
          expect(await quality(ids.mixed, updateId), `data quality after ${JSON.stringify(s)}`).toEqual(
            await quality(ids.duck, duckUpdate),
          );
          // A pipeline that has written no table yet has nothing to capture.
          if (file === filesAtStart) continue;
          const captured = await Promise.all([
            cp.client.captureRewindPoint(ids.duck),
            cp.client.captureRewindPoint(ids.mixed),
          ]);
          points.push({ duck: captured[0].rewind_point_id, mixed: captured[1].rewind_point_id });
          for (const table of ["raw", "clean", "by_name", "current", "history"])
            expect(await rows(schemas.mixed, table), `${table} after ${JSON.stringify(s)}`).toEqual(
              await rows(schemas.duck, table),
            );
        }
        expect(sparkRan.length).toBeGreaterThan(0);
        expect(new Set(sparkRan)).toEqual(new Set(["spark"]));
      }),
      { numRuns: Number(process.env["EBB_SPARK_EQUIVALENCE_RUNS"] ?? 1), endOnFailure: true },
    );
  }, 1_500_000);

  it("fails a batch on Spark whose rows fail a `fail` expectation, or whose condition is no boolean, as DuckDB does", async () => {
    const landing = await mkdtemp(path.join(cp.landing, "fail-"));
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
      const { pipeline_id } = await cp.client.createPipeline(failing(engine, condition));
      const { update_id } = await cp.client.startUpdate(pipeline_id, {});
      const update = await cp.client.waitForUpdate(pipeline_id, update_id, {
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
  }, 300_000);
});
