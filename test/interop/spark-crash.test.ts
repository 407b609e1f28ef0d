import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rewindEnvironment } from "../../shared/control/plane/control-plane.ts";
import { DatasetCatalog } from "../../shared/engine/dataset-catalog.ts";
import { crashOnce, type CrashHook } from "../../shared/engine/crash-points.ts";
import { InjectedCrashError } from "../../shared/engine/errors.ts";
import { viewStateFlowId } from "../../shared/engine/materialized-view.ts";
import type { SparkJobs } from "../../shared/engine/spark/spark-jobs.ts";
import { listAllKeys, type ObjectStore } from "../../shared/object-store/object-store.ts";
import type { ValidatedPipeline } from "../../shared/pipeline/validate-pipeline.ts";
import { vacuumDataset } from "../../shared/rewind/rewind-vacuum.ts";
import { sharedLocalSparkJobs, type LocalSparkJobs } from "../../functions/runtime/local-spark-jobs.ts";
import { EngineHarness } from "../integration/engine/engine-harness.ts";
import { testAws } from "../support/aws.ts";
import { crashPipeline, scd2History, STEPS, VIEW, type CrashStep } from "./spark-crash-pipeline.ts";
import { jobKeys, observed, type Observed, stateFiles, staging } from "./spark-crash-observed.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * Crashes of Spark batches, through the control-plane steps the state machine runs, on real Spark (the
 * pinned local driver) over the bucket's real files. One pipeline holds a flow of each kind
 * (spark-crash-pipeline.ts) and is taken through steps, each crashing one flow's batch: Ebb crashed
 * after planning, after the job's manifest but before the commit, after the state write, after the
 * commit, before HEAD moves, at a materialized view's commit, and the Spark driver killed while its job
 * writes. Each step's next update (its retry) converges: every table, the stateful flows' state and the
 * view's partials equal the DuckDB-only run's after the same step (every row exactly once), and VACUUM
 * removes what the dead attempt left in its staging folders (its files, its committer's `_temporary`
 * scratch, its state version), leaving only files the tables and HEAD's state reference. The next step
 * continues from what the retry wrote.
 */

/** A store that throws `InjectedCrashError` once, when Ebb writes the table commit `crashAt()` names. */
function crashingAtCommit(
  store: ObjectStore,
  crashAt: () => string | undefined,
  fired: () => void,
): ObjectStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === "putIfAbsent")
        return async (key: string, body: Uint8Array) => {
          const log = crashAt();
          if (log !== undefined && key.startsWith(log) && /\/\d{20}\.json$/.test(key)) {
            fired();
            throw new InjectedCrashError("after-data-files");
          }
          return target.putIfAbsent(key, body);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe.skipIf(!sparkEngineReady)("Spark batches that die", () => {
  // One driver for the file (a JVM start costs more than the batches).
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

  /** What the current step does to its first update (set by `armed`, cleared once it ran). */
  let step: CrashStep | undefined;
  let crash: CrashHook | undefined;
  let killed = false;
  let reruns = 0;
  let commitCrashed = false;
  /** The flows whose job ended in the current step's first update. */
  const jobsEnded = new Set<string>();
  let harness: EngineHarness;
  let pipeline: ValidatedPipeline;
  /** The ids landed for `history` so far. */
  const cdcIds: number[] = [];

  /** A bucket URI (`s3a://bucket/<harness prefix>pipeline/<key>`) as a key of the harness's store. */
  const keyOf = (uri: string) =>
    uri.replace(/^s3a?:\/\/[^/]+\//, "").slice(harness.prefix.length + "pipeline/".length);

  /** Kills the driver once a file shows in `folder` while the job runs. */
  const killWhenWriting = async (job: ReturnType<SparkJobs["run"]>, folder: string) => {
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

  const spark = (prefix: string): SparkJobs => {
    const shared = sparkDriver();
    return {
      bucketUri: (key) => shared.bucketUri(prefix + key),
      locationUri: (location, key) => shared.locationUri(location, key),
      run: async (request) => {
        try {
          return await runAs(shared, request);
        } finally {
          if (step) jobsEnded.add(request.flow);
        }
      },
    };
  };

  /** The request's job, killed or run twice when the step asks so. */
  const runAs = async (shared: LocalSparkJobs, request: Parameters<SparkJobs["run"]>[0]) => {
    const what = step?.crash;
    if (what?.kind === "kill" && what.flow === request.flow && !killed) {
      const folder =
        what.folder === "state"
          ? request.state && `${keyOf(request.state.stagingUri)}/`
          : `${keyOf(request.output.tableUri)}/${request.output.stagingPath}/`;
      if (folder) return killWhenWriting(shared.run(request), folder);
    }
    const first = await shared.run(request);
    if (what?.kind !== "rerun" || what.flow !== request.flow || first.failure || reruns > 0) return first;
    reruns++;
    return shared.run(request);
  };

  /** Starts the step's update and waits for its end. */
  const update = async (request: Record<string, unknown> = {}) =>
    harness.settled(await harness.start(pipeline, request));

  /**
   * The DuckDB-only run, step by step, uncrashed: it runs beside the Spark steps (which wait on the
   * JVM much of the time), each of which waits for its own step's observation only.
   */
  const referenceRun = () => {
    const reference = new EngineHarness();
    const duckPipeline = crashPipeline(reference, "duckdb");
    const steps: Promise<Observed>[] = [];
    let previous: Promise<unknown> = duckPipeline;
    for (const s of STEPS) {
      const seen = previous.then(async () => {
        const duck = await duckPipeline;
        for (const [key, text] of s.land) await reference.land(key, text);
        const done = await reference.settled(await reference.start(duck, s.request ?? {}));
        if (done.error !== undefined)
          throw new Error(`the DuckDB-only run failed at ${s.title}`, { cause: done.error });
        return observed(reference, duck);
      });
      steps.push(seen);
      previous = seen;
    }
    const closed = previous.catch(() => undefined).finally(() => reference.close());
    return { steps, closed };
  };
  let expected: ReturnType<typeof referenceRun>;

  beforeAll(async () => {
    expected = referenceRun();
    // A failure of it is the failure of each step it leaves without a reference.
    for (const seen of expected.steps) seen.catch(() => undefined);
    harness = new EngineHarness({
      crash: (point, seq) => crash?.(point, seq),
      spark,
      bucket: (store) =>
        crashingAtCommit(
          store,
          () =>
            // Once the dataset's job ran (a reset before it commits too).
            step?.crash?.kind === "commit" &&
            !commitCrashed &&
            jobsEnded.has(viewStateFlowId(step.crash.view))
              ? `${new DatasetCatalog(pipeline, store).tablePrefix(step.crash.view)}_delta_log/`
              : undefined,
          () => (commitCrashed = true),
        ),
    });
    pipeline = await crashPipeline(harness, "spark");
  }, 600_000);
  afterAll(async () => {
    await harness?.close();
    await expected?.closed;
  });

  for (const [i, s] of STEPS.entries()) {
    it(s.title, async () => {
      for (const [key, text] of s.land) {
        await harness.land(key, text);
        if (key.startsWith("cdc/"))
          cdcIds.push(
            ...text
              .trim()
              .split("\n")
              .map((l) => Number(JSON.parse(l).id)),
          );
      }
      step = s;
      crash = s.crash?.kind === "point" ? crashOnce(s.crash.point) : undefined;
      let done = await update(s.request);
      step = crash = undefined;
      jobsEnded.clear();

      const what = s.crash;
      if (what && what.kind !== "rerun") {
        expect(done.state).toBe("FAILED");
        if (what.kind === "kill") {
          expect(killed).toBe(true);
          expect((done.error as Error | undefined)?.message).toMatch(
            what.flow === "ingest"
              ? /flow "ingest": the Spark job .* failed \(the Spark driver exited during the job\)/
              : /the Spark driver exited during the job/,
          );
          killed = false;
        } else {
          expect(done.error).toBeInstanceOf(InjectedCrashError);
          if (what.kind === "commit") expect(commitCrashed).toBe(true);
        }
        if (what.kind === "point" && what.vacuumBeforeRetry) {
          // The dead attempt's manifest and data files, unreferenced: VACUUM removes them, and the
          // retry (a fresh attempt) converges all the same.
          expect(await jobKeys(harness)).not.toEqual([]);
          expect((await staging(harness, pipeline, "raw")).orphans).not.toEqual([]);
          await vacuumDataset(rewindEnvironment(harness.plane, harness.pipelineId, pipeline), "raw", {
            retentionHours: 0,
            allowShortRetention: true,
          });
          expect(await jobKeys(harness)).toEqual([]);
          expect((await staging(harness, pipeline, "raw")).orphans).toEqual([]);
        }
        done = await update(s.request);
      }
      expect(done.error).toBeUndefined();
      expect(done.state).toBe("COMPLETED");
      if (what?.kind === "rerun") expect(reruns).toBe(1);
      // The view's recompute (its first load, a full refresh) ran on Spark.
      if (i === 0 || s.request) expect(done.views[VIEW]?.engine).toBe("spark");
      expect(await observed(harness, pipeline)).toEqual(await expected.steps[i]);
      // Every row exactly once, whatever the DuckDB-only run says.
      const ids = async (table: string) =>
        (await harness.rows(pipeline, table)).map((r) => Number(r["id"])).sort((a, b) => a - b);
      expect(await ids("clean")).toEqual(await ids("raw"));
      expect(new Set(await ids("raw")).size).toBe((await ids("raw")).length);
      const history = (await harness.rows(pipeline, "history")).map((r) => ({
        region: String(r["region"]),
        id: Number(r["id"]),
        start: Number(r["__START_AT"]),
        end: r["__END_AT"] === null ? null : Number(r["__END_AT"]),
      }));
      history.sort((a, b) => a.region.localeCompare(b.region) || a.start - b.start);
      expect(history).toEqual(scd2History(cdcIds));

      // The dead attempt's files: unreferenced, then gone; what the tables and HEAD read stays.
      const leftovers = async () => {
        let orphans = 0;
        for (const dataset of s.vacuum) {
          const data = await staging(harness, pipeline, dataset);
          const state = await stateFiles(harness, pipeline, dataset);
          orphans += data.orphans.length + (state?.orphans.length ?? 0);
        }
        return orphans;
      };
      if (s.orphans) expect(await leftovers()).toBeGreaterThan(0);
      const env = rewindEnvironment(harness.plane, harness.pipelineId, pipeline);
      for (const dataset of s.vacuum)
        await vacuumDataset(env, dataset, { retentionHours: 0, allowShortRetention: true });
      expect(await leftovers()).toBe(0);
      for (const dataset of s.vacuum) {
        const state = await stateFiles(harness, pipeline, dataset);
        if (state) expect(state.keys.length, dataset).toBeGreaterThan(0);
      }
      expect((await staging(harness, pipeline, "raw")).keys.length).toBeGreaterThan(0);
      // Every batch is settled: its job's folder went as HEAD moved (or the view's commit landed).
      expect(await jobKeys(harness)).toEqual([]);
      expect(await observed(harness, pipeline)).toEqual(await expected.steps[i]);
    });
  }
});
