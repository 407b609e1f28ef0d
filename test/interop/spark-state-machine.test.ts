import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalSparkJobs } from "../../functions/runtime/local-spark-jobs.ts";
import { synthesizeEbb } from "../../infra/local/ebb-synthesis.ts";
import { localEmrServerless, START_JOB_RUN_SYNC } from "../../infra/local/local-emr-serverless.ts";
import { listAllKeys } from "../../shared/object-store/object-store.ts";
import { sparkJobsPrefix } from "../../shared/store/bucket-layout.ts";
import { testAws, testObjectStore } from "../support/aws.ts";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";

/**
 * The AWS Spark path through the update state machine as synthesized with `sparkEngine` on, run by
 * aws-local-stepfunctions: RunFlow hands a Spark batch over (its request in the bucket, `sparkRequest`
 * in its answer), the machine's `startJobRun.sync` state runs it — mapped to the local runtime's real
 * `spark-submit` driver, the entry script EMR runs, behind the same port — and loops back to RunFlow,
 * which commits that attempt's manifest (the job run's id in `flow_progress`), or, when the job failed,
 * fails the update with SPARK_JOB_FAILED carrying Spark's error and the job run's id.
 */

const python = process.env["EBB_SPARK_PYTHON"];
const jars = process.env["EBB_SPARK_JARS"];

describe.skipIf(python === undefined || jars === undefined)(
  "Spark batches through the state machine's EMR Serverless state (skipped without EBB_SPARK_PYTHON and EBB_SPARK_JARS: bash functions/spark/setup.sh)",
  () => {
    let cp: TestControlPlane;
    let spark: LocalSparkJobs;
    const jobs: string[] = [];
    const bucket = testObjectStore("");

    beforeAll(async () => {
      const { endpoints, storage } = testAws();
      spark = new LocalSparkJobs({
        python: python!,
        jars: jars!,
        bucket: storage.bucket,
        s3Endpoint: endpoints.s3Endpoint,
        credentials: endpoints.credentials,
      });
      const emr = localEmrServerless({ bucket: storage.bucket, store: bucket, spark });
      const startJobRun = emr[START_JOB_RUN_SYNC]!;
      cp = await startTestControlPlane({
        ebb: synthesizeEbb({ sparkEngine: { enabled: true } }),
        serviceTasks: {
          [START_JOB_RUN_SYNC]: async (input) => {
            jobs.push(JSON.stringify(input));
            return startJobRun(input);
          },
        },
      });
    }, 240_000);
    afterAll(async () => {
      await cp?.close();
      await spark?.close();
    });

    const create = async (schema: string, landing: string) =>
      cp.client.createPipeline({
        name: `spark on the machine ${schema}`,
        catalog: "spark_machine",
        schema,
        configuration: { "pipelines.engine": "spark" },
        definition: {
          datasets: [
            {
              type: "streaming_table",
              name: "raw",
              flows: [
                {
                  name: "ingest",
                  source: { type: "auto_loader", path: landing, format: "json", schema: { id: "BIGINT" } },
                  options: { max_files_per_batch: 1 },
                  sql: "SELECT id, id * 2 AS twice FROM source",
                },
              ],
            },
          ],
        },
      });
    const run = async (pipelineId: string) => {
      const { update_id } = await cp.client.startUpdate(pipelineId, {});
      const update = await cp.client.waitForUpdate(pipelineId, update_id, {
        intervalMs: 250,
        timeoutMs: 300_000,
      });
      return { ...update, update_id };
    };

    it("runs each batch as a job of the machine's startJobRun.sync state, then commits it in RunFlow", async () => {
      const landing = `${cp.landing}/ok`;
      const { mkdir, writeFile } = await import("node:fs/promises");
      await mkdir(landing, { recursive: true });
      await writeFile(`${landing}/a.json`, '{"id": 1}\n{"id": 2}\n');
      await writeFile(`${landing}/b.json`, '{"id": 3}\n');
      const { pipeline_id } = await create("ok", landing);
      const before = jobs.length;

      const update = await run(pipeline_id);
      expect(update.state, JSON.stringify(update.error)).toBe("COMPLETED");
      const { rows } = await cp.client.query("spark_machine.ok.raw", {
        sql: "SELECT id, twice FROM t ORDER BY id",
      });
      expect(rows).toEqual([
        { id: 1, twice: 2 },
        { id: 2, twice: 4 },
        { id: 3, twice: 6 },
      ]);

      // Two batches (one file each): two job runs, each named for its batch, reading its request in
      // the flow's Spark jobs folder; both committed, nothing is left there.
      const started = jobs.slice(before).map((text) => JSON.parse(text) as Record<string, unknown>);
      expect(started).toHaveLength(2);
      expect(started.map((job) => job["Name"])).toEqual(["ingest-1", "ingest-2"]);
      const folder = sparkJobsPrefix(pipeline_id, "ingest");
      for (const [i, job] of started.entries()) {
        const args = (job["JobDriver"] as { SparkSubmit: { EntryPointArguments: string[] } }).SparkSubmit
          .EntryPointArguments;
        expect(args[0]).toBe("--request");
        expect(args[1]).toMatch(new RegExp(`/${folder}${i + 1}/[0-9a-f]+/request\\.json$`));
      }
      expect(await listAllKeys(bucket, folder)).toEqual([]);

      const { events } = await cp.client.events(pipeline_id, {
        filter: `event_type = 'flow_progress' AND origin.update_id = '${update.update_id}'`,
      });
      const progress = events
        .map((e) => e.details["flow_progress"] as { engine?: string; spark_job_id?: string })
        .filter((p) => p.engine !== undefined);
      expect(progress).toHaveLength(2);
      for (const p of progress) {
        expect(p.engine).toBe("spark");
        expect(p.spark_job_id).toMatch(/^local-\d+\/ingest-[12]$/);
      }
    });

    it("fails the update with SPARK_JOB_FAILED, Spark's error and the job run's id, when the job fails", async () => {
      const landing = `${cp.landing}/bad`;
      const { mkdir, writeFile } = await import("node:fs/promises");
      await mkdir(landing, { recursive: true });
      await writeFile(`${landing}/a.json`, '{"id": 1}\n{"id": "not a number"\n');
      const { pipeline_id } = await create("bad", landing);

      const update = await run(pipeline_id);
      expect(update.state).toBe("FAILED");
      expect(update.error?.error_code).toBe("SPARK_JOB_FAILED");
      expect(update.error?.message).toMatch(
        /flow "ingest": the Spark job local-\d+\/ingest-1 of batch 1 failed/,
      );
      // The entry script's own account of it (its failed manifest), not the job run's state details.
      expect(update.error?.message).toMatch(/JsonEOFException/);
      expect(update.error?.message).not.toMatch(/Job failed:/);
    });
  },
);
