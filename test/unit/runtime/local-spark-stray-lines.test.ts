import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalSparkJobs } from "../../../functions/runtime/local-spark-jobs.ts";
import type { SparkBatchRequest } from "../../../shared/engine/spark/spark-batch-contract.ts";

/**
 * A line on the local Spark driver's stdout that is not an answer (a library's print, half a JSON
 * object) is skipped, not thrown out of `run()`: the answer after it ends the batch. The driver is a
 * shell script in the engine's place, writing such lines before its answers (this is about the
 * answer protocol, not Spark).
 */
const strayDriver = `#!/bin/sh
echo '{"ok":true,"ready":true,"applicationId":"fake"}'
while read -r request; do
  echo 'not JSON at all'
  echo '{"truncated":'
  echo '{"ok":"maybe"}'
  case "$request" in
    *'"flow":"bad"'*) echo '{"ok":false,"failure":{"status":"failed","kind":"job","message":"boom"}}' ;;
    *'"flow":"dies"'*) exit 3 ;;
    *) echo '{"ok":true,"manifest":{}}' ;;
  esac
done
`;

const batch = (flow: string): SparkBatchRequest => ({
  flow,
  dataset: "raw",
  sql: "SELECT * FROM source",
  txn: { appId: `p/${flow}`, version: 1 },
  input: { kind: "files", format: "json", schema: null, uris: [] },
  output: { tableUri: "s3a://bucket/t", stagingPath: "spark/1-a", partitionColumns: [] },
  manifestUri: "s3a://bucket/m.json",
});

describe("the local Spark driver's stray stdout lines", () => {
  let folder: string;
  let spark: LocalSparkJobs;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), "ebb-stray-lines-"));
    const python = path.join(folder, "driver.sh");
    await writeFile(python, strayDriver);
    await chmod(python, 0o755);
    spark = new LocalSparkJobs({ python, jars: folder, bucket: "bucket" });
  });
  afterAll(async () => {
    await spark?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("are skipped: each batch ends with its own answer, in order", async () => {
    expect(await spark.run(batch("first"))).toEqual({ jobId: "fake/first-1" });
    expect(await spark.run(batch("bad"))).toEqual({
      jobId: "fake/bad-1",
      failure: { status: "failed", kind: "job", message: "boom" },
    });
    expect(await spark.run(batch("second"))).toEqual({ jobId: "fake/second-1" });
  });

  it("and a driver that exits after them fails its batch, the next one starting a new driver", async () => {
    expect(await spark.run(batch("dies"))).toMatchObject({
      failure: { status: "failed", kind: "job", message: "the Spark driver exited during the job" },
    });
    expect(await spark.run(batch("after"))).toEqual({ jobId: "fake/after-1" });
  });
});
