import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import { EXIT, runCli } from "../../../shared/cli/main.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * What the Spark engine refuses, through the HTTP API on the local runtime, each with its own code
 * naming the flow and the way out: a flow Spark cannot run is refused when the update asks for Spark
 * (its `engine`, or `pipelines.engine = spark`) before any batch is planned; a batch given to Spark
 * where none is configured fails the update with SPARK_ENGINE_NOT_CONFIGURED, and the same batch then
 * runs on DuckDB. (A failing Spark job needs Spark: test/interop/spark-replay.test.ts.)
 */

// This runtime has no Spark, whatever the shell exported.
delete process.env["EBB_SPARK_PYTHON"];
delete process.env["EBB_SPARK_JARS"];

const pipeline = (
  landing: string,
  schema: string,
  extra: { sql?: string; expectations?: unknown[]; configuration?: Record<string, string> } = {},
) => ({
  name: `spark refusals ${schema}`,
  catalog: "spark_refusals",
  schema,
  configuration: { "pipelines.rewind.enabled": "true", ...extra.configuration },
  definition: {
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        ...(extra.expectations ? { expectations: extra.expectations } : {}),
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: landing, format: "json", schema: { id: "BIGINT" } },
            sql: extra.sql ?? "SELECT id FROM source",
          },
        ],
      },
    ],
  },
});

describe("the Spark engine's refusals", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane();
    await cp.land("a.json", [{ id: 1 }, { id: 2 }]);
  });
  afterAll(() => cp?.close());

  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error("expected a refusal");
      },
      (error: unknown) => {
        expect(error).toBeInstanceOf(EbbApiError);
        return error as EbbApiError;
      },
    );

  it("refuses an update on Spark of an expectation written for DuckDB, naming the flow, before any batch", async () => {
    const { pipeline_id } = await cp.client.createPipeline(
      pipeline(cp.landing, "expect", {
        expectations: [{ name: "has_id", condition: "id::VARCHAR <> ''", on_violation: "drop" }],
      }),
    );
    for (const body of [{ engine: "spark" }, { engine: "spark", validate_only: true }]) {
      const refused = await refusal(cp.client.startUpdate(pipeline_id, body));
      expect(refused.errorCode).toBe("FLOW_NOT_SUPPORTED_ON_SPARK");
      expect(refused.status).toBe(400);
      expect(refused.message).toMatch(
        /flow "ingest" cannot run on Spark: expectation "has_id" of dataset "raw" is written for DuckDB \(a :: cast/,
      );
      expect(refused.message).toContain("run it on DuckDB");
    }
    // `ebb run --engine spark` sends the same request.
    let err = "";
    const code = await runCli(
      ["run", pipeline_id, "--engine", "spark", "--endpoint", cp.plane.endpoint, "--token", cp.plane.token],
      { out: () => undefined, err: (text) => (err += text), confirm: async () => true, width: 80 },
    );
    expect(code).toBe(EXIT.refused);
    expect(err).toMatch(/FLOW_NOT_SUPPORTED_ON_SPARK.*flow "ingest" cannot run on Spark/s);
    // Nothing was planned: the update on DuckDB runs the file.
    const { update_id } = await cp.client.startUpdate(pipeline_id, {});
    expect((await cp.client.waitForUpdate(pipeline_id, update_id)).state).toBe("COMPLETED");
    // Each batch's flow_progress event names the engine that ran it.
    const { events } = await cp.client.events(pipeline_id, {
      filter: `event_type = 'flow_progress' AND origin.update_id = '${update_id}'`,
    });
    expect(
      events.map((e) => {
        const progress = e.details["flow_progress"] as { status: string; engine?: string };
        return [progress.status, progress.engine];
      }),
    ).toEqual(expect.arrayContaining([["RUNNING", "duckdb"]]));
  });

  it("refuses SQL written for DuckDB when the pipeline runs on Spark, naming the construct", async () => {
    const { pipeline_id } = await cp.client.createPipeline(
      pipeline(cp.landing, "duckish", {
        sql: "SELECT id::VARCHAR AS id FROM source",
        configuration: { "pipelines.engine": "spark" },
      }),
    );
    const refused = await refusal(cp.client.startUpdate(pipeline_id, {}));
    expect(refused.errorCode).toBe("FLOW_NOT_SUPPORTED_ON_SPARK");
    expect(refused.message).toMatch(
      /flow "ingest" cannot run on Spark: its SQL is written for DuckDB \(a :: cast/,
    );
    // The update's own engine overrides the pipeline's: this one runs on DuckDB.
    const { update_id } = await cp.client.startUpdate(pipeline_id, { engine: "duckdb" });
    expect((await cp.client.waitForUpdate(pipeline_id, update_id)).state).toBe("COMPLETED");
  });

  it("refuses an update on Spark of a materialized view written for DuckDB before any batch, but not a view kept incrementally", async () => {
    const withView = (schema: string, sql: string) => {
      const definition = pipeline(cp.landing, schema);
      return {
        ...definition,
        definition: {
          datasets: [...definition.definition.datasets, { type: "materialized_view", name: "ids", sql }],
        },
      };
    };
    // A recompute (no GROUP BY of decomposable aggregates): Spark would run it, and cannot.
    const recomputed = await cp.client.createPipeline(
      withView("view_duckish", "SELECT id::VARCHAR AS id FROM raw"),
    );
    const refused = await refusal(cp.client.startUpdate(recomputed.pipeline_id, { engine: "spark" }));
    expect(refused.errorCode).toBe("FLOW_NOT_SUPPORTED_ON_SPARK");
    expect(refused.message).toMatch(
      /^materialized view "ids" cannot run on Spark: its SQL is written for DuckDB \(a :: cast/,
    );
    // Nothing ran: the raw table was never written.
    expect(await cp.client.listUpdates(recomputed.pipeline_id)).toMatchObject({ updates: [] });
    // Kept incrementally, a view refreshes on DuckDB whatever the engine: not refused.
    const incremental = await cp.client.createPipeline(
      withView("view_incremental", "SELECT id, count(*) AS n FROM raw WHERE id::VARCHAR <> '' GROUP BY id"),
    );
    await cp.client.startUpdate(incremental.pipeline_id, { engine: "spark", validate_only: true });
  });

  it("takes windowed aggregations (DISTINCT aggregates, sub-second windows) and stream-stream joins on Spark", async () => {
    const windowed = (schema: string, sql: string, join = false) => ({
      name: `spark refusals ${schema}`,
      catalog: "spark_refusals",
      schema,
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "other",
            flows: [
              {
                name: "other_ingest",
                source: {
                  type: "auto_loader",
                  path: cp.landing,
                  format: "json",
                  schema: { id: "BIGINT", ts: "TIMESTAMP" },
                },
                sql: "SELECT id, ts FROM source",
              },
            ],
          },
          {
            type: "streaming_table",
            name: "counts",
            flows: [
              {
                name: "windows",
                source: {
                  type: "auto_loader",
                  path: cp.landing,
                  format: "json",
                  schema: { id: "BIGINT", ts: "TIMESTAMP" },
                },
                sql,
                watermark: { column: "ts", delay: "10 minutes" },
                ...(join
                  ? { join: { stream: "other", watermark: { column: "ts", delay: "10 minutes" } } }
                  : {}),
              },
            ],
          },
        ],
      },
    });
    const start = async (schema: string, sql: string, join = false) => {
      const { pipeline_id } = await cp.client.createPipeline(windowed(schema, sql, join));
      return cp.client.startUpdate(pipeline_id, { engine: "spark", validate_only: true });
    };
    // Every aggregate of a window runs on Spark, of DISTINCT values too, and any window size:
    // validation takes them.
    await start(
      "win",
      "SELECT window, count(*) AS n, avg(id) AS mean FROM source GROUP BY window(ts, '10 minutes')",
    );
    await start(
      "win_distinct",
      "SELECT window, count(DISTINCT id) AS ids FROM source GROUP BY window(ts, '1500 milliseconds', '500 milliseconds')",
    );
    // A stream-stream join runs on Spark over the join's state (ebb_spark_join.py): validation takes it.
    await start(
      "win_join",
      "SELECT s.id, o.ts AS other_ts FROM source s JOIN other o ON s.id = o.id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL 1 HOUR",
      true,
    );
  });

  it("refuses an engine with a rewind: a rewind runs no batch", async () => {
    const { pipeline_id } = await cp.client.createPipeline(pipeline(cp.landing, "rewound"));
    const refused = await refusal(
      cp.client.startUpdate(pipeline_id, {
        engine: "spark",
        rewind_spec: { rewind_timestamp: "2026-01-01T00:00:00Z" },
      }),
    );
    expect(refused.errorCode).toBe("INVALID_PARAMETER_VALUE");
    expect(refused.message).toContain("rewind_spec cannot be combined with engine");
  });

  it("fails an update on Spark where no Spark is configured, naming the flow; the batch then runs on DuckDB", async () => {
    const { pipeline_id } = await cp.client.createPipeline(pipeline(cp.landing, "unconfigured"));
    const { update_id } = await cp.client.startUpdate(pipeline_id, { engine: "spark" });
    const failed = await cp.client.waitForUpdate(pipeline_id, update_id);
    expect(failed.state).toBe("FAILED");
    expect(failed).toMatchObject({
      engine: "spark",
      error: { error_code: "SPARK_ENGINE_NOT_CONFIGURED" },
    });
    expect(failed.error?.message).toMatch(
      /flow "ingest" was to run on Spark, but this deployment has no Spark engine.*EBB_SPARK_PYTHON.*on AWS: enable the construct's sparkEngine prop.*engine "duckdb"/,
    );

    const { update_id: again } = await cp.client.startUpdate(pipeline_id, {});
    expect((await cp.client.waitForUpdate(pipeline_id, again)).state).toBe("COMPLETED");
    const { rows } = await cp.client.query("spark_refusals.unconfigured.raw", {
      sql: "SELECT id FROM t ORDER BY id",
    });
    expect(rows).toEqual([{ id: 1 }, { id: 2 }]);
  });
});
