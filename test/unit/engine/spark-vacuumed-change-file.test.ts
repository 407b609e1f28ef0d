import { describe, expect, it } from "vitest";
import { DataFilesVacuumedError } from "../../../shared/delta/index.ts";
import type { PlannedInput } from "../../../shared/engine/planned-input.ts";
import { runSparkJob, type SparkBatch } from "../../../shared/engine/spark/spark-batch.ts";
import type { SparkFailure } from "../../../shared/engine/spark/spark-batch-contract.ts";
import { SparkJobFailedError } from "../../../shared/engine/spark/errors.ts";
import type { SparkJobs } from "../../../shared/engine/spark/spark-jobs.ts";

/**
 * A change file VACUUM removed after Ebb planned a Spark batch and before the job read it fails the
 * batch as the DuckDB engine's read does (`DELTA_CHANGE_DATA_FILE_NOT_FOUND`, naming the upstream, the
 * version and the retention), not as SPARK_JOB_FAILED. The job is a fake port answering a failure as
 * the entry script reports a missing file (ebb_spark_batch.py `failure_of`).
 */
const CDC_PATH = "_change_data/cdc-00000-3f%25a.c000.snappy.parquet";
const CDC_KEY = "_change_data/cdc-00000-3f%a.c000.snappy.parquet";
const ROOT = "s3a://bucket/pipelines/p1/tables/main/sales/current";

const changeFeedInput: PlannedInput = {
  kind: "table",
  upstream: { dataset: "current" },
  schemaString: "{}",
  partitionColumns: [],
  slices: [],
  rows: 0,
  changeFeed: [
    {
      path: "part-00000-a.snappy.parquet",
      partitionValues: {},
      version: 3,
      timestamp: 1,
      changeType: "insert",
    },
    { path: CDC_PATH, partitionValues: {}, version: 4, timestamp: 2, changeType: null },
  ],
  changeFeedRetention: "interval 2 days",
  skippedRestores: [],
};

const failedWith = (failure: SparkFailure, input: PlannedInput = changeFeedInput) => {
  const spark: SparkJobs = {
    bucketUri: (key) => `s3a://bucket/${key}`,
    locationUri: (location, key) => `${location}/${key}`,
    run: async () => ({ jobId: "app/current_changes-7", failure }),
  } as SparkJobs;
  const batch = {
    pipelineId: "p1",
    flow: "current_changes",
    dataset: "current_changes",
    sql: "SELECT * FROM source",
    seq: 7,
    txn: { appId: "p1/current_changes", version: 7 },
    input,
    catalog: { tablePrefix: () => "pipelines/p1/tables/main/sales/current" },
    spark,
  } as unknown as Omit<SparkBatch, "target" | "session" | "beforeCommit">;
  return runSparkJob(batch).then(
    () => undefined,
    (error: unknown) => error,
  );
};

describe("a Spark job's missing change file", () => {
  for (const [kind, message] of [
    [
      "input",
      `java.io.FileNotFoundException: No such file or directory: ${ROOT}/${CDC_KEY} (under org.apache.spark.SparkException: Job aborted due to stage failure)`,
    ],
    [
      "input",
      `org.apache.spark.SparkFileNotFoundException: [FAILED_READ_FILE.FILE_NOT_EXIST] File ${ROOT}/${CDC_KEY} does not exist.`,
    ],
    ["job", `[PATH_NOT_FOUND] Path does not exist: ${ROOT}/${CDC_KEY}.`],
  ] as const) {
    it(`is the vacuumed-files refusal: ${message.slice(0, 50)}…`, async () => {
      const error = await failedWith({ status: "failed", kind, message });
      expect(error).toBeInstanceOf(DataFilesVacuumedError);
      expect(error).toMatchObject({
        errorCode: "DELTA_CHANGE_DATA_FILE_NOT_FOUND",
        versions: [4],
        path: CDC_PATH,
        retention: "interval 2 days",
        table: "current",
      });
      expect((error as Error).message).toContain("Read the changes from version 5 on");
    });
  }

  it("stays SPARK_JOB_FAILED for a file Ebb did not plan, a failure of another kind, or a batch of data files", async () => {
    const unplanned = `java.io.FileNotFoundException: No such file or directory: ${ROOT}/_change_data/other.parquet`;
    expect(await failedWith({ status: "failed", kind: "input", message: unplanned })).toBeInstanceOf(
      SparkJobFailedError,
    );
    const jobFailure = `java.lang.OutOfMemoryError while reading ${ROOT}/${CDC_KEY}`;
    expect(await failedWith({ status: "failed", kind: "job", message: jobFailure })).toBeInstanceOf(
      SparkJobFailedError,
    );
    const {
      changeFeed: _,
      changeFeedRetention: __,
      ...slices
    } = changeFeedInput as Extract<PlannedInput, { kind: "table" }>;
    const missing = `java.io.FileNotFoundException: No such file or directory: ${ROOT}/${CDC_KEY}`;
    expect(await failedWith({ status: "failed", kind: "input", message: missing }, slices)).toBeInstanceOf(
      SparkJobFailedError,
    );
  });
});
