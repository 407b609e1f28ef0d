import { describe, expect, it } from "vitest";
import { readFlowState } from "../../shared/control/flow-states/flow-state-reads.ts";
import { rewindEnvironment } from "../../shared/control/plane/control-plane.ts";
import { DeltaTable } from "../../shared/delta/index.ts";
import { DatasetCatalog } from "../../shared/engine/dataset-catalog.ts";
import { crashOnce, type CrashHook, type CrashPoint } from "../../shared/engine/crash-points.ts";
import { vacuumDataset } from "../../shared/rewind/rewind-vacuum.ts";
import { liveStateFiles } from "../../shared/state/state-vacuum.ts";
import { flowStatePrefix } from "../../shared/store/bucket-layout.ts";
import { InjectedCrashError } from "../../shared/engine/errors.ts";
import type { SparkJobs } from "../../shared/engine/spark/spark-jobs.ts";
import type { ValidatedPipeline } from "../../shared/pipeline/validate-pipeline.ts";
import { listAllKeys } from "../../shared/object-store/object-store.ts";
import { sharedLocalSparkJobs, type LocalSparkJobs } from "../../functions/runtime/local-spark-jobs.ts";
import { EngineHarness, jsonLines, rawIdsTable } from "../integration/engine/engine-harness.ts";
import { testAws } from "../support/aws.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * Crashes of a Spark batch, through the control-plane steps the state machine runs, on real Spark (the
 * pinned local driver) over the bucket's real files: Ebb crashed after planning, after the job's
 * manifest but before the commit, after the commit, before HEAD moves, and the Spark driver killed
 * while its job writes. Each time the next update converges (every row in each table exactly once),
 * and VACUUM removes what the dead attempt left in its staging folder (its files, or its committer's
 * `_temporary` scratch), leaving only files the table references. An AUTO CDC batch on Spark crashed
 * before or after its MERGE converges too, its per-key state carried on (SCD type 2, late events).
 */

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

  /**
   * Wraps the port's run: the first job for which `folderOf` names a folder (in `harness()`'s store)
   * is watched, and the driver killed once a file shows in that folder while the job runs.
   */
  const killOnceWriting = (
    harness: () => EngineHarness,
    folderOf: (request: Parameters<SparkJobs["run"]>[0]) => string | undefined,
  ) => {
    let killed = false;
    const around =
      (run: SparkJobs["run"]): SparkJobs["run"] =>
      async (request) => {
        const folder = killed ? undefined : folderOf(request);
        if (folder === undefined) return run(request);
        const job = run(request);
        let ended = false;
        void job.finally(() => (ended = true));
        while (!ended && !killed) {
          if ((await listAllKeys(harness().store, folder)).length > 0) {
            killed = true;
            sparkDriver().kill();
          } else await new Promise((resolve) => setTimeout(resolve, 25));
        }
        return job;
      };
    return { around, killed: () => killed };
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

  /** Keys left in the pipeline's Spark job folders (requests, manifests, state staging). */
  const jobKeys = async (harness: EngineHarness) =>
    (await listAllKeys(harness.store, `state/${harness.pipelineId}/spark-jobs/`)).map((o) => o.key);

  const converges = async (
    harness: EngineHarness,
    crashed: { expectOrphans: boolean; vacuumBeforeRetry?: boolean },
  ) => {
    const pipeline = await definition(harness);
    await harness.land("f0.json", jsonLines(1, 3));
    await harness.land("f1.json", jsonLines(4, 3));
    const failed = await harness.run(pipeline);
    expect(failed.state).toBe("FAILED");
    if (crashed.vacuumBeforeRetry) {
      // The dead attempt's manifest and data files, unreferenced: VACUUM removes them, and the retry
      // (a fresh attempt) converges all the same.
      expect(await jobKeys(harness)).not.toEqual([]);
      expect((await staging(harness, pipeline, "raw")).orphans).not.toEqual([]);
      const env = rewindEnvironment(harness.plane, harness.pipelineId, pipeline);
      await vacuumDataset(env, "raw", { retentionHours: 0, allowShortRetention: true });
      expect(await jobKeys(harness)).toEqual([]);
      expect((await staging(harness, pipeline, "raw")).orphans).toEqual([]);
    }
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
    // Every batch is settled: its job's folder went as HEAD moved.
    expect(await jobKeys(harness)).toEqual([]);
    return failed;
  };

  const points: readonly { point: CrashPoint; orphans: boolean; vacuumBeforeRetry?: boolean }[] = [
    { point: "after-plan", orphans: false },
    // The job wrote its files and manifest; Ebb died before committing them: the retry's new attempt
    // writes its own, and the dead attempt's are unreferenced (here VACUUM removes them first).
    { point: "after-data-files", orphans: false, vacuumBeforeRetry: true },
    { point: "after-table-commit", orphans: false },
    { point: "before-head-move", orphans: false },
  ];
  for (const { point, orphans, vacuumBeforeRetry } of points) {
    it(`converges after a crash ${point} of the second batch`, async () => {
      const harness = new EngineHarness({ crash: crashOnce(point, 2), spark: port() });
      try {
        const failed = await converges(harness, { expectOrphans: orphans, vacuumBeforeRetry });
        expect(failed.error).toBeInstanceOf(InjectedCrashError);
      } finally {
        await harness.close();
      }
    });
  }

  it("converges after the Spark driver is killed while its job writes", async () => {
    // The first job is killed once a file shows in its staging folder (the committer's scratch).
    const kill = killOnceWriting(
      () => harness,
      (request) =>
        `${request.output.tableUri.replace(/^s3a:\/\/[^/]+\//, "").slice(harness.prefix.length + "pipeline/".length)}/${request.output.stagingPath}/`,
    );
    const harness = new EngineHarness({ spark: port(kill.around) });
    try {
      const failed = await converges(harness, { expectOrphans: true });
      expect(kill.killed()).toBe(true);
      expect((failed.error as Error | undefined)?.message).toMatch(
        /flow "ingest": the Spark job .* failed \(the Spark driver exited during the job\)/,
      );
    } finally {
      await harness.close();
    }
  });

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
    });
  }

  /**
   * Stateful batches on Spark: a stream-stream LEFT OUTER join (its state tables `join_left` and
   * `join_right`) and a windowed aggregation (`windows`, a DISTINCT aggregate's set too). Three
   * updates: the first leaves rows and windows waiting in the state; the second's batch of the
   * operator pairs with them, lets some go and emits windows, and dies at a point (the next update
   * retries it); the third continues from the state the retry wrote. After the retry and at the end,
   * every table and the state version its checkpoint names (tables, rows, watermark) equal a
   * DuckDB-only run's; VACUUM then removes what the dead attempt left (its data files in the table's
   * staging folder, its state files and version in the flow's state folder), keeping what HEAD reads.
   */
  interface StatefulCase {
    readonly flow: string;
    readonly dataset: string;
    readonly tables: readonly string[];
    readonly definition: (harness: EngineHarness, engine: "duckdb" | "spark") => Promise<ValidatedPipeline>;
    /** The files each update lands (`key` under the landing folder, lines). */
    readonly updates: readonly (readonly [key: string, lines: readonly object[]])[][];
    /** Batches of other flows that reach each crash point before the operator's, in the crashed update. */
    readonly before: number;
    /**
     * The crash points it is run at (default every one): each takes one to two minutes of Spark, and
     * what a point proves beyond the operator's state (the job not started, the commit found) the
     * other operators' cases prove already.
     */
    readonly points?: readonly CrashPoint[];
  }
  const at = (minute: number) =>
    `2026-01-01 ${String(12 + Math.floor(minute / 60))}:${String(minute % 60).padStart(2, "0")}:00`;
  const statefulCases: Record<string, StatefulCase> = {
    "a stream-stream join": {
      flow: "attribute",
      dataset: "attributed",
      tables: ["clicks", "impressions", "attributed"],
      definition: (harness, engine) => {
        const feed = (name: string) => ({
          type: "streaming_table",
          name,
          flows: [
            {
              name: `land_${name}`,
              source: {
                type: "auto_loader",
                path: `${harness.landingUri}${name}/`,
                format: "json",
                schema: { id: "VARCHAR", ad: "VARCHAR", ts: "TIMESTAMP" },
              },
              sql: "SELECT id, ad, ts FROM source",
            },
          ],
        });
        return harness.validate({
          name: "spark crash join",
          catalog: "main",
          schema: "spark_crash_join",
          configuration: { "pipelines.engine": engine },
          datasets: [
            feed("clicks"),
            feed("impressions"),
            {
              type: "streaming_table",
              name: "attributed",
              flows: [
                {
                  name: "attribute",
                  source: { type: "stream", dataset: "clicks" },
                  watermark: { column: "ts", delay: "5 minutes" },
                  join: { stream: "impressions", watermark: { column: "ts", delay: "5 minutes" } },
                  sql:
                    "SELECT c.id AS click, i.id AS impression, c.ts AS click_ts FROM source c LEFT JOIN impressions i " +
                    "ON c.ad = i.ad AND c.ts BETWEEN i.ts AND i.ts + INTERVAL 10 MINUTES",
                },
              ],
            },
          ],
        });
      },
      updates: [
        // i1 and c1 wait (c1's ad has no impression yet).
        [
          ["impressions/f0.json", [{ id: "i1", ad: "a", ts: at(0) }]],
          ["clicks/f0.json", [{ id: "c1", ad: "z", ts: at(5) }]],
        ],
        // c2 pairs with i1 from the state; the watermark (12:45) lets c1 go (a LEFT OUTER row) and i1.
        [
          ["impressions/f1.json", [{ id: "i2", ad: "b", ts: at(45) }]],
          [
            "clicks/f1.json",
            [
              { id: "c2", ad: "a", ts: at(8) },
              { id: "c3", ad: "b", ts: at(50) },
            ],
          ],
        ],
        // c4 pairs with i2, which the retried batch kept.
        [
          ["impressions/f2.json", [{ id: "i3", ad: "y", ts: at(90) }]],
          ["clicks/f2.json", [{ id: "c4", ad: "b", ts: at(52) }]],
        ],
      ],
      // Both feeds' batches commit before the join's.
      before: 2,
      points: ["after-state-write"],
    },
    "a windowed aggregation": {
      flow: "by_kind",
      dataset: "kinds",
      tables: ["kinds"],
      definition: (harness, engine) =>
        harness.validate({
          name: "spark crash windows",
          catalog: "main",
          schema: "spark_crash_windows",
          configuration: { "pipelines.engine": engine },
          datasets: [
            {
              type: "streaming_table",
              name: "kinds",
              flows: [
                {
                  name: "by_kind",
                  source: {
                    type: "auto_loader",
                    path: harness.landingUri,
                    format: "json",
                    schema: { id: "BIGINT", kind: "VARCHAR", ts: "TIMESTAMP" },
                  },
                  watermark: { column: "ts", delay: "10 minutes" },
                  sql:
                    "SELECT window.start AS start, kind, count(*) AS n, sum(id) AS ids, count(DISTINCT id) AS ids_seen " +
                    "FROM source GROUP BY window(ts, '10 minutes', '5 minutes'), kind",
                },
              ],
            },
          ],
        }),
      updates: [
        [
          [
            "f0.json",
            [
              { id: 1, kind: "a", ts: at(1) },
              { id: 2, kind: "b", ts: at(7) },
              { id: 1, kind: "a", ts: at(12) },
            ],
          ],
        ],
        // Continues the open windows, completes the first ones (watermark 12:21), opens new ones.
        [
          [
            "f1.json",
            [
              { id: 3, kind: "a", ts: at(13) },
              { id: 4, kind: "b", ts: at(31) },
              { id: 3, kind: "a", ts: at(14) },
            ],
          ],
        ],
        [
          [
            "f2.json",
            [
              { id: 5, kind: "b", ts: at(33) },
              { id: 6, kind: "a", ts: at(60) },
            ],
          ],
        ],
      ],
      before: 0,
    },
  };

  /** Every table's rows and the flow's state at HEAD, as the state reader answers it, without its ids. */
  const observed = async (harness: EngineHarness, pipeline: ValidatedPipeline, c: StatefulCase) => {
    const tables: Record<string, unknown[]> = {};
    for (const table of c.tables) {
      const rows = await harness.rows(pipeline, table);
      tables[table] = rows
        .map((r) => JSON.stringify(r, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v)))
        .sort();
    }
    const {
      pipeline_id: _,
      state_version: __,
      ...state
    } = await readFlowState(harness.plane, harness.pipelineId, c.flow, { max_results: 10_000 });
    return { tables, state };
  };

  const landed = async (harness: EngineHarness, files: StatefulCase["updates"][number]) => {
    for (const [key, lines] of files)
      await harness.land(key, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  };

  /** The DuckDB-only run's tables and state after each update, once per case. */
  const references = new Map<string, Promise<Awaited<ReturnType<typeof observed>>[]>>();
  const reference = (name: string, c: StatefulCase) => {
    const computed = async () => {
      const harness = new EngineHarness();
      try {
        const pipeline = await c.definition(harness, "duckdb");
        const seen = [];
        for (const files of c.updates) {
          await landed(harness, files);
          expect((await harness.run(pipeline)).state).toBe("COMPLETED");
          seen.push(await observed(harness, pipeline, c));
        }
        return seen;
      } finally {
        await harness.close();
      }
    };
    if (!references.has(name)) references.set(name, computed());
    return references.get(name)!;
  };

  /** The flow's state files, and those no committed checkpoint's state version lists (a dead attempt's). */
  const stateFiles = async (harness: EngineHarness, c: StatefulCase) => {
    const ref = { pipelineId: harness.pipelineId, flowId: c.flow };
    const head = (await harness.plane.checkpoints.head(ref)).seq;
    const versions: string[] = [];
    for (let seq = 1; seq <= head; seq++) {
      // The operator's state version, and the auto_loader's file set (`stateRef`).
      const checkpoint = await harness.plane.checkpoints.get(ref, seq);
      for (const key of [checkpoint?.stateVersion, checkpoint?.stateRef]) if (key) versions.push(key);
    }
    const live = await liveStateFiles(harness.store, versions);
    const keys = (await listAllKeys(harness.store, flowStatePrefix(harness.pipelineId, c.flow))).map(
      (o) => o.key,
    );
    return { keys, orphans: keys.filter((key) => !live.has(key)) };
  };

  const stateful = async (
    name: string,
    c: StatefulCase,
    options: { crash?: CrashHook; around?: (run: SparkJobs["run"]) => SparkJobs["run"]; orphans: boolean },
    harness: EngineHarness,
    arm: () => void,
  ) => {
    const expected = await reference(name, c);
    const pipeline = await c.definition(harness, "spark");
    await landed(harness, c.updates[0]!);
    expect((await harness.run(pipeline)).state).toBe("COMPLETED");
    expect(await observed(harness, pipeline, c)).toEqual(expected[0]);
    arm();
    await landed(harness, c.updates[1]!);
    const failed = await harness.run(pipeline);
    expect(failed.state).toBe("FAILED");
    const recovered = await harness.run(pipeline);
    expect(recovered.error).toBeUndefined();
    expect(recovered.state).toBe("COMPLETED");
    expect(await observed(harness, pipeline, c)).toEqual(expected[1]);

    // The dead attempt's files: unreferenced, then gone; what HEAD reads stays.
    const table = () => staging(harness, pipeline, c.dataset);
    const before = { data: await table(), state: await stateFiles(harness, c) };
    if (options.orphans) expect(before.data.orphans.length + before.state.orphans.length).toBeGreaterThan(0);
    const env = rewindEnvironment(harness.plane, harness.pipelineId, pipeline);
    await vacuumDataset(env, c.dataset, { retentionHours: 0, allowShortRetention: true });
    const after = { data: await table(), state: await stateFiles(harness, c) };
    expect(after.data.orphans).toEqual([]);
    expect(after.state.orphans).toEqual([]);
    expect(after.state.keys.length).toBeGreaterThan(0);
    expect(await observed(harness, pipeline, c)).toEqual(expected[1]);

    // The next batch continues from the retry's state.
    await landed(harness, c.updates[2]!);
    expect((await harness.run(pipeline)).state).toBe("COMPLETED");
    expect(await observed(harness, pipeline, c)).toEqual(expected[2]);
    return failed;
  };

  for (const [name, c] of Object.entries(statefulCases)) {
    // Before the job (after planning), after it (its manifest read, the state version written, the
    // commit not made), after the commit (the retry runs the job again for the state the checkpoint
    // names; the commit is found, the retry's data files are left over), and mid-write below.
    const crashes: readonly { point: CrashPoint; orphans: boolean }[] = [
      { point: "after-plan", orphans: false },
      { point: "after-state-write", orphans: true },
      { point: "after-table-commit", orphans: true },
    ];
    for (const { point, orphans } of crashes.filter((crash) => c.points?.includes(crash.point) ?? true)) {
      it(`${name} on Spark converges after a crash ${point} of its batch`, async () => {
        let armed = false;
        // Counted from the crashed update on: the other flows' batches reach the point first.
        const once = crashOnce(point, point === "after-state-write" ? 1 : c.before + 1);
        const harness = new EngineHarness({
          crash: (p, seq) => (armed ? once(p, seq) : undefined),
          spark: port(),
        });
        try {
          const failed = await stateful(name, c, { orphans }, harness, () => (armed = true));
          expect(failed.error).toBeInstanceOf(InjectedCrashError);
        } finally {
          await harness.close();
        }
      });
    }

    it(`${name} on Spark converges after the Spark driver is killed while its job writes the state`, async () => {
      let armed = false;
      // The operator's job is killed once a file shows in its state staging folder.
      const kill = killOnceWriting(
        () => harness,
        (request) =>
          armed && request.state
            ? `${request.state.stagingUri.replace(/^s3a?:\/\/[^/]+\//, "").slice(harness.prefix.length + "pipeline/".length)}/`
            : undefined,
      );
      const harness = new EngineHarness({ spark: port(kill.around) });
      try {
        const failed = await stateful(name, c, { orphans: false }, harness, () => (armed = true));
        expect(kill.killed()).toBe(true);
        expect((failed.error as Error | undefined)?.message).toMatch(
          /the Spark driver exited during the job/,
        );
      } finally {
        await harness.close();
      }
    });
  }

  // The state machine retries its startJobRun.sync state on the service's internal errors
  // (ebb-spark-engine.ts): a second job of the same request (the same attempt's staging folders) may
  // run after the first one wrote. It converges: it writes beside the first run's files, and its
  // manifest names only its own; VACUUM removes the first run's.
  it("a windowed batch whose job runs again for the same request converges", async () => {
    const c = statefulCases["a windowed aggregation"]!;
    let armed = false;
    let reruns = 0;
    const twice =
      (run: SparkJobs["run"]): SparkJobs["run"] =>
      async (request) => {
        const first = await run(request);
        if (!armed || first.failure) return first;
        reruns++;
        return run(request);
      };
    const harness = new EngineHarness({ spark: port(twice) });
    try {
      const expected = await reference("a windowed aggregation", c);
      const pipeline = await c.definition(harness, "spark");
      for (const [i, files] of c.updates.entries()) {
        armed = i === 1;
        await landed(harness, files);
        const update = await harness.run(pipeline);
        expect(update.error).toBeUndefined();
        expect(update.state).toBe("COMPLETED");
        expect(await observed(harness, pipeline, c)).toEqual(expected[i]);
        if (!armed) continue;
        expect(reruns).toBe(1);
        const before = await stateFiles(harness, c);
        expect(before.orphans.length).toBeGreaterThan(0);
        for (const dataset of c.tables)
          await vacuumDataset(rewindEnvironment(harness.plane, harness.pipelineId, pipeline), dataset, {
            retentionHours: 0,
            allowShortRetention: true,
          });
        expect((await stateFiles(harness, c)).orphans).toEqual([]);
        for (const dataset of c.tables)
          expect((await staging(harness, pipeline, dataset)).orphans).toEqual([]);
      }
    } finally {
      await harness.close();
    }
  });
});
