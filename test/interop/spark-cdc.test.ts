import { afterAll, describe, expect, it } from "vitest";
import { DatasetCatalog } from "../../shared/engine/dataset-catalog.ts";
import { listAllKeys } from "../../shared/object-store/object-store.ts";
import type { SparkJobs } from "../../shared/engine/spark/spark-jobs.ts";
import { LocalSparkJobs } from "../../functions/runtime/local-spark-jobs.ts";
import { EngineHarness } from "../integration/engine/engine-harness.ts";
import { testAws } from "../support/aws.ts";

/**
 * An AUTO CDC batch on Spark, through the control-plane steps the state machine runs, on real Spark
 * (the pinned local driver): the job classifies the events with `apply_as_deletes` in Spark SQL, where
 * the flow's rows are (a function both dialects know means Spark's there: `substr(op, 0, 1)` is the
 * first character in Spark and '' in DuckDB), and the rows it staged for the apply are deleted once
 * the batch is done, without waiting for VACUUM.
 */

const sparkEngineReady =
  process.env["EBB_SPARK_PYTHON"] !== undefined && process.env["EBB_SPARK_JARS"] !== undefined;

describe.skipIf(!sparkEngineReady)("an AUTO CDC batch on Spark", () => {
  let driver: LocalSparkJobs | undefined;
  afterAll(async () => driver?.close());
  const port = (prefix: string): SparkJobs => {
    const { endpoints, storage } = testAws();
    const shared = (driver ??= new LocalSparkJobs({
      python: process.env["EBB_SPARK_PYTHON"]!,
      jars: process.env["EBB_SPARK_JARS"]!,
      bucket: storage.bucket,
      s3Endpoint: endpoints.s3Endpoint,
      credentials: endpoints.credentials,
    }));
    return {
      bucketUri: (key) => shared.bucketUri(prefix + key),
      locationUri: (location, key) => shared.locationUri(location, key),
      run: (request) => shared.run(request),
    };
  };

  it("evaluates apply_as_deletes in Spark SQL and deletes its staged rows once committed", async () => {
    const harness = new EngineHarness({ spark: port });
    try {
      const pipeline = await harness.validate({
        name: "spark cdc",
        catalog: "main",
        schema: "spark_cdc",
        configuration: { "pipelines.engine": "spark" },
        datasets: [
          {
            type: "streaming_table",
            name: "customers",
            flows: [
              {
                name: "apply",
                source: {
                  type: "auto_loader",
                  path: harness.landingUri,
                  format: "json",
                  schema: { id: "BIGINT", name: "VARCHAR", op: "VARCHAR", seq: "BIGINT" },
                },
                sql: "SELECT id, name, op, seq FROM source",
                auto_cdc: {
                  keys: ["id"],
                  sequence_by: "seq",
                  stored_as_scd_type: 1,
                  apply_as_deletes: "substr(op, 0, 1) = 'D'",
                  except_column_list: ["op", "seq"],
                },
              },
            ],
          },
        ],
      });
      const events = [
        { id: 1, name: "ada", op: "UPSERT", seq: 1 },
        { id: 2, name: "bob", op: "UPSERT", seq: 2 },
        { id: 1, name: null, op: "DELETE", seq: 3 },
      ];
      await harness.land("f0.json", events.map((e) => JSON.stringify(e)).join("\n") + "\n");
      const update = await harness.run(pipeline);
      expect(update.error).toBeUndefined();
      expect(update.state).toBe("COMPLETED");
      const rows = await harness.rows(pipeline, "customers", "id");
      expect(rows.map((r) => ({ id: Number(r["id"]), name: r["name"] }))).toEqual([{ id: 2, name: "bob" }]);

      const store = new DatasetCatalog(pipeline, harness.store).tableStore("customers");
      expect((await listAllKeys(store, "spark/")).map((o) => o.key)).toEqual([]);
    } finally {
      await harness.close();
    }
  }, 300_000);
});
