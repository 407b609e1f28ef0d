import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDefinitionText } from "../../shared/pipeline/parse-definition.ts";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * The seed's incident with the replay on Spark, on the local runtime through the HTTP API (the demo's
 * flow, examples/demo.ts): a day of orders runs, a bad deploy writes wrong amounts, the pipeline is
 * rewound to the point before it, the fix is deployed and the replay runs as one update on Spark
 * (`"engine": "spark"`). Every table then equals that of a pipeline that ran the fixed code from the
 * start on DuckDB alone, and the replay's flow_progress events name Spark and its job.
 *
 * And a Spark job that fails (a malformed record, which Spark refuses in FAILFAST mode) fails its
 * update with SPARK_JOB_FAILED naming the flow and the job; nothing is committed, and once the file is
 * fixed the batch runs again as planned, on Spark, each row once.
 */

const ORDERS = fileURLToPath(new URL("../../examples/orders/", import.meta.url));

describe.skipIf(!sparkEngineReady)("the demo's incident with the replay on Spark", () => {
  let cp: TestControlPlane;
  let landing: string;
  beforeAll(async () => {
    cp = await startTestControlPlane();
    landing = await mkdtemp(path.join(cp.landing, "orders-"));
  }, 240_000);
  afterAll(async () => cp?.close());

  const definition = async (file: string, schema: string) => {
    const text = (await readFile(path.join(ORDERS, file), "utf8")).replaceAll("${LANDING}", landing);
    const { datasets, ...settings } = readDefinitionText(text) as { datasets: unknown[] };
    return {
      ...settings,
      name: `orders ${schema}`,
      catalog: "spark_replay",
      schema,
      definition: { datasets },
    };
  };
  const land = (file: string, orders: readonly [number, number, string][]) =>
    writeFile(
      path.join(landing, file),
      orders.map(([id, amount_cents, region]) => JSON.stringify({ id, amount_cents, region })).join("\n") +
        "\n",
    );
  const run = async (pipelineId: string, body: unknown = {}) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, {
      intervalMs: 250,
      timeoutMs: 240_000,
    });
    return { ...update, update_id };
  };
  const completed = async (pipelineId: string, body: unknown = {}) => {
    const update = await run(pipelineId, body);
    expect(update.state, JSON.stringify(update.error)).toBe("COMPLETED");
    return update.update_id;
  };
  const rows = async (schema: string, table: string) =>
    (await cp.client.query(`spark_replay.${schema}.${table}`, { sql: "SELECT * FROM t ORDER BY ALL" })).rows;
  const progress = async (pipelineId: string, updateId: string) => {
    const { events } = await cp.client.events(pipelineId, {
      filter: `event_type = 'flow_progress' AND origin.update_id = '${updateId}'`,
    });
    return events
      .map((e) => ({
        flow: e.origin.flow_name,
        ...(e.details["flow_progress"] as {
          engine?: string;
          spark_job_id?: string;
          batch?: { duration_ms: number };
        }),
      }))
      .filter((p) => p.engine !== undefined);
  };

  it("replays on Spark after the rewind; every table equals the DuckDB-only fixed run", async () => {
    const { pipeline_id: incident } = await cp.client.createPipeline(
      await definition("pipeline.yaml", "incident"),
    );
    await land("day-1.json", [
      [1, 1250, "eu"],
      [2, 4000, "us"],
      [3, 999, "eu"],
    ]);
    await completed(incident);
    const [point] = (await cp.client.rewindPoints(incident)).rewind_points;
    await new Promise((resolve) => setTimeout(resolve, 1100)); // whole seconds between good and bad commits

    await cp.client.editPipeline(incident, await definition("pipeline-bad-deploy.yaml", "incident"));
    await land("day-2.json", [
      [4, 2000, "us"],
      [5, 500, "apac"],
    ]);
    await completed(incident);
    expect(await rows("incident", "orders")).toContainEqual({ id: 4, amount: 2000, region: "US" });

    const spec = {
      rewind_point_id: point!.rewind_point_id,
      datasets: [{ identifier: "spark_replay.incident.raw_orders", cascade: true, reset_checkpoints: true }],
    };
    await completed(incident, { rewind_spec: spec });
    await cp.client.editPipeline(incident, await definition("pipeline.yaml", "incident"));
    const replay = await completed(incident, { engine: "spark" });
    expect((await cp.client.getUpdate(incident, replay)).update).toMatchObject({ engine: "spark" });

    // Each batch of the replay ran on Spark, and its event names the job; the view's refresh is
    // incremental (its input only gained rows), which runs on DuckDB whatever the engine
    // (docs/spark-engine.md), and says so.
    const progressed = await progress(incident, replay);
    expect(progressed.filter((p) => p.flow === "revenue_by_region").map((p) => p.engine)).toEqual(["duckdb"]);
    const batches = progressed.filter((p) => p.flow !== "revenue_by_region");
    expect(new Set(batches.map((b) => b.flow))).toEqual(new Set(["ingest", "clean"]));
    for (const batch of batches) {
      expect(batch.engine).toBe("spark");
      expect(batch.spark_job_id).toMatch(/^local-\d+\/.+-\d+$/);
    }

    const { pipeline_id: fixed } = await cp.client.createPipeline(await definition("pipeline.yaml", "fixed"));
    const fixedUpdate = await completed(fixed);
    // The fixed cost of a batch on each engine, start to commit (the first Spark batch starts the driver).
    const fixedRun = (await progress(fixed, fixedUpdate)).filter((p) => p.batch !== undefined);
    console.log(
      `batch durations (ms): spark ${batches.map((b) => b.batch?.duration_ms).join(", ")}; duckdb ${fixedRun.map((b) => b.batch?.duration_ms).join(", ")}`,
    );
    for (const table of ["raw_orders", "orders", "revenue_by_region"])
      expect(await rows("incident", table), table).toEqual(await rows("fixed", table));
    expect(await rows("incident", "revenue_by_region")).toEqual([
      { region: "APAC", orders: 1, revenue: 5 },
      { region: "EU", orders: 2, revenue: 22.49 },
      { region: "US", orders: 2, revenue: 60 },
    ]);
    // The next update is back on the pipeline's engine.
    await land("day-3.json", [[6, 100, "eu"]]);
    const next = await completed(incident);
    expect(new Set((await progress(incident, next)).map((b) => b.engine))).toEqual(new Set(["duckdb"]));
  });

  it("fails an update whose Spark job fails with SPARK_JOB_FAILED naming the flow and the job; the fixed batch runs again as planned", async () => {
    const folder = await mkdtemp(path.join(cp.landing, "failing-"));
    const { pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "spark job failure",
      catalog: "spark_replay",
      schema: "failing",
      configuration: { "pipelines.engine": "spark" },
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: folder, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT id FROM source",
              },
            ],
          },
        ],
      },
    });
    await writeFile(path.join(folder, "a.json"), '{"id": 1}\n{"id": 2\n');
    const failed = await run(pipelineId);
    expect(failed.state).toBe("FAILED");
    expect(failed.error?.error_code).toBe("SPARK_JOB_FAILED");
    expect(failed.error?.message).toMatch(
      /^flow "ingest": the Spark job local-\d+\/ingest-\d+ of batch \d+ failed \(com\.fasterxml\.jackson\.core\.io\.JsonEOFException: .*"\{"id": 2".*\); nothing was committed/,
    );
    await expect(
      cp.client.query("spark_replay.failing.raw", { sql: "SELECT * FROM t" }),
    ).rejects.toMatchObject({ status: 404 });

    await writeFile(path.join(folder, "a.json"), '{"id": 1}\n{"id": 2}\n');
    const retried = await completed(pipelineId);
    expect((await progress(pipelineId, retried)).map((b) => b.engine)).toEqual(["spark"]);
    expect(await rows("failing", "raw")).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it("casts as Spark 4 does (ANSI), as the DuckDB engine does: a cast of bad text fails the batch on either engine", async () => {
    const folder = await mkdtemp(path.join(cp.landing, "ansi-"));
    await writeFile(path.join(folder, "a.json"), '{"code": "12"}\n{"code": "12x"}\n');
    const failures: Record<string, string | undefined> = {};
    for (const engine of ["spark", "duckdb"]) {
      const { pipeline_id: pipelineId } = await cp.client.createPipeline({
        name: `ansi casts ${engine}`,
        catalog: "spark_replay",
        schema: `ansi_${engine}`,
        configuration: { "pipelines.engine": engine },
        definition: {
          datasets: [
            {
              type: "streaming_table",
              name: "codes",
              flows: [
                {
                  name: "ingest",
                  source: { type: "auto_loader", path: folder, format: "json", schema: { code: "STRING" } },
                  sql: "SELECT CAST(code AS INT) AS n FROM source",
                },
              ],
            },
          ],
        },
      });
      const failed = await run(pipelineId);
      expect(failed.state, engine).toBe("FAILED");
      failures[engine] = failed.error?.message;
    }
    expect(failures["spark"]).toMatch(/CAST_INVALID_INPUT.*'12x'/s);
    expect(failures["duckdb"]).toMatch(/12x/);
  });
});
