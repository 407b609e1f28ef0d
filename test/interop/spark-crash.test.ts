import { describe, expect, it } from "vitest";
import { DeltaTable } from "../../shared/delta/index.ts";
import { DatasetCatalog } from "../../shared/engine/dataset-catalog.ts";
import { crashOnce, type CrashPoint } from "../../shared/engine/crash-points.ts";
import { InjectedCrashError } from "../../shared/engine/errors.ts";
import type { SparkJobs } from "../../shared/engine/spark/spark-jobs.ts";
import type { ValidatedPipeline } from "../../shared/pipeline/validate-pipeline.ts";
import { listAllKeys } from "../../shared/object-store/object-store.ts";
import { sharedLocalSparkJobs, type LocalSparkJobs } from "../../functions/runtime/local-spark-jobs.ts";
import { EngineHarness, jsonLines, rawIdsTable } from "../integration/engine/engine-harness.ts";
import { testAws } from "../support/aws.ts";

/**
 * Crashes of a Spark batch, through the control-plane steps the state machine runs, on real Spark (the
 * pinned local driver) over the bucket's real files: Ebb crashed after planning, after the job's
 * manifest but before the commit, after the commit, before HEAD moves, and the Spark driver killed
 * while its job writes. Each time the next update converges (every row in each table exactly once),
 * and VACUUM removes what the dead attempt left in its staging folder (its files, or its committer's
 * `_temporary` scratch), leaving only files the table references. An AUTO CDC batch on Spark crashed
 * before or after its MERGE converges too, its per-key state carried on (SCD type 2, late events).
 */

const sparkEngineReady =
  process.env["EBB_SPARK_PYTHON"] !== undefined && process.env["EBB_SPARK_JARS"] !== undefined;

describe.skipIf(!sparkEngineReady)("a Spark batch that dies", () => {
  // One driver for the file (a JVM start costs more than the batches); each harness its own folder.
  let driver: LocalSparkJobs | undefined;
  const sparkDriver = () => {
    const { endpoints, storage } = testAws();
    return (driver ??= sharedLocalSparkJobs({
      python: process.env["EBB_SPARK_PYTHON"]!,
      jars: process.env["EBB_SPARK_JARS"]!,
      bucket: storage.bucket,
      s3Endpoint: endpoints.s3Endpoint,
      credentials: endpoints.credentials,
    }));
  };
  // The worker's driver: the next file the interop config runs in this worker takes it on.

  const port =
    (around?: (run: SparkJobs["run"]) => SparkJobs["run"]) =>
    (prefix: string): SparkJobs => {
      const shared = sparkDriver();
      const run: SparkJobs["run"] = (request) => shared.run(request);
      return {
        bucketUri: (key) => shared.bucketUri(prefix + key),
        locationUri: (location, key) => shared.locationUri(location, key),
        run: around ? around(run) : run,
      };
    };

  const definition = (harness: EngineHarness) =>
    harness.validate({
      name: "spark crash",
      catalog: "main",
      schema: "spark_crash",
      configuration: { "pipelines.engine": "spark" },
      datasets: [
        rawIdsTable(harness, { max_files_per_batch: 1 }),
        {
          type: "streaming_table",
          name: "clean",
          flows: [
            {
              name: "tidy",
              source: { type: "stream", dataset: "raw" },
              sql: "SELECT id, id * 10 AS tens FROM source",
            },
          ],
        },
      ],
    });

  /** Keys under the table's Spark staging folders, and those the table's latest version references. */
  const staging = async (harness: EngineHarness, pipeline: ValidatedPipeline, dataset: string) => {
    const store = new DatasetCatalog(pipeline, harness.store).tableStore(dataset);
    const table = await DeltaTable.open(store);
    try {
      const keys = (await listAllKeys(store, "spark/")).map((object) => object.key);
      const referenced = new Set(table.snapshot.files.keys());
      return { keys, orphans: keys.filter((key) => !referenced.has(key)), store };
    } finally {
      await table.close();
    }
  };

  const converges = async (harness: EngineHarness, crashed: { expectOrphans: boolean }) => {
    const pipeline = await definition(harness);
    await harness.land("f0.json", jsonLines(1, 3));
    await harness.land("f1.json", jsonLines(4, 3));
    const failed = await harness.run(pipeline);
    expect(failed.state).toBe("FAILED");
    const recovered = await harness.run(pipeline);
    expect(recovered.error).toBeUndefined();
    expect(recovered.state).toBe("COMPLETED");
    for (const table of ["raw", "clean"]) {
      const ids = (await harness.rows(pipeline, table)).map((r) => Number(r["id"])).sort((a, b) => a - b);
      expect(ids, table).toEqual([1, 2, 3, 4, 5, 6]);
    }
    const before = await staging(harness, pipeline, "raw");
    if (crashed.expectOrphans) expect(before.orphans.length).toBeGreaterThan(0);
    const table = await DeltaTable.open(before.store);
    try {
      await table.vacuum({ retentionHours: 0, allowShortRetention: true });
    } finally {
      await table.close();
    }
    const after = await staging(harness, pipeline, "raw");
    expect(after.orphans).toEqual([]);
    expect(after.keys.length).toBeGreaterThan(0);
    return failed;
  };

  const points: readonly { point: CrashPoint; orphans: boolean }[] = [
    { point: "after-plan", orphans: false },
    // The job wrote its files and manifest; Ebb died before committing them: the retry's new attempt
    // writes its own, and the dead attempt's are unreferenced.
    { point: "after-data-files", orphans: true },
    { point: "after-table-commit", orphans: false },
    { point: "before-head-move", orphans: false },
  ];
  for (const { point, orphans } of points) {
    it(`converges after a crash ${point} of the second batch`, async () => {
      const harness = new EngineHarness({ crash: crashOnce(point, 2), spark: port() });
      try {
        const failed = await converges(harness, { expectOrphans: orphans });
        expect(failed.error).toBeInstanceOf(InjectedCrashError);
      } finally {
        await harness.close();
      }
    }, 300_000);
  }

  it("converges after the Spark driver is killed while its job writes", async () => {
    let killed = false;
    // The first job is killed once a file shows in its staging folder (the committer's scratch).
    const killMidWrite =
      (run: SparkJobs["run"]): SparkJobs["run"] =>
      async (request) => {
        if (killed) return run(request);
        const job = run(request);
        const folder = `${request.output.tableUri.replace(/^s3a:\/\/[^/]+\//, "").slice(harness.prefix.length + "pipeline/".length)}/${request.output.stagingPath}/`;
        let ended = false;
        void job.finally(() => (ended = true));
        while (!ended && !killed) {
          if ((await listAllKeys(harness.store, folder)).length > 0) {
            killed = true;
            sparkDriver().kill();
          } else await new Promise((resolve) => setTimeout(resolve, 25));
        }
        return job;
      };
    const harness = new EngineHarness({ spark: port(killMidWrite) });
    try {
      const failed = await converges(harness, { expectOrphans: true });
      expect(killed).toBe(true);
      expect((failed.error as Error | undefined)?.message).toMatch(
        /flow "ingest": the Spark job .* failed \(the Spark driver exited during the job\)/,
      );
    } finally {
      await harness.close();
    }
  }, 400_000);

  // An AUTO CDC batch on Spark writes the next state version before its MERGE: a retry after the
  // commit runs the job again and rewrites the same state (the MERGE is not applied twice), so the
  // next batch continues from it. Sequences arrive out of order (the second file is older).
  for (const point of ["after-data-files", "after-table-commit", "before-head-move"] as const) {
    it(`an AUTO CDC (SCD type 2) batch on Spark converges after a crash ${point}`, async () => {
      const harness = new EngineHarness({ crash: crashOnce(point, 2), spark: port() });
      try {
        const pipeline = await harness.validate({
          name: "spark crash cdc",
          catalog: "main",
          schema: "spark_crash_cdc",
          configuration: { "pipelines.engine": "spark" },
          datasets: [
            {
              type: "streaming_table",
              name: "history",
              flows: [
                {
                  name: "apply",
                  source: {
                    type: "auto_loader",
                    path: harness.landingUri,
                    format: "json",
                    schema: { id: "BIGINT", amount: "BIGINT", region: "VARCHAR" },
                  },
                  sql: "SELECT region, id, amount FROM source",
                  options: { max_files_per_batch: 1 },
                  auto_cdc: { keys: ["region"], sequence_by: "id", stored_as_scd_type: 2 },
                },
              ],
            },
          ],
        });
        await harness.land("f0.json", jsonLines(4, 3));
        await harness.land("f1.json", jsonLines(1, 3));
        const failed = await harness.run(pipeline);
        expect(failed.error).toBeInstanceOf(InjectedCrashError);
        expect((await harness.run(pipeline)).state).toBe("COMPLETED");
        await harness.land("f2.json", jsonLines(7, 3));
        expect((await harness.run(pipeline)).state).toBe("COMPLETED");
        const rows = (await harness.rows(pipeline, "history")).map((r) => ({
          region: String(r["region"]),
          id: Number(r["id"]),
          start: Number(r["__START_AT"]),
          end: r["__END_AT"] === null ? null : Number(r["__END_AT"]),
        }));
        rows.sort((a, b) => a.region.localeCompare(b.region) || a.start - b.start);
        const regions = ["apac", "eu", "us"];
        const expected = regions.flatMap((region) => {
          const ids = [1, 2, 3, 4, 5, 6, 7, 8, 9].filter((id) => ["eu", "us", "apac"][id % 3] === region);
          return ids.map((id, i) => ({ region, id, start: id, end: ids[i + 1] ?? null }));
        });
        expect(rows).toEqual(expected);
      } finally {
        await harness.close();
      }
    }, 300_000);
  }
});
