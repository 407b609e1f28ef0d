import { describe, expect, it } from "vitest";
import { DatasetCatalog } from "../../shared/engine/dataset-catalog.ts";
import { listAllKeys } from "../../shared/object-store/object-store.ts";
import type { SparkJobs } from "../../shared/engine/spark/spark-jobs.ts";
import { sharedLocalSparkJobs, type LocalSparkJobs } from "../../functions/runtime/local-spark-jobs.ts";
import { EngineHarness } from "../integration/engine/engine-harness.ts";
import { testAws } from "../support/aws.ts";
import { cdcTwinCheck } from "./cdc-twin-checks.ts";
import { twinsOnControlPlane } from "./twin-pipelines.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * An AUTO CDC batch on Spark, through the control-plane steps the state machine runs, on real Spark
 * (the pinned local driver): the job classifies the events with `apply_as_deletes` in Spark SQL, where
 * the flow's rows are (a function both dialects know means Spark's there: `substr(op, 0, 1)` is the
 * first character in Spark and '' in DuckDB), stages only the events that can still decide an SCD type
 * 1 target, ties at one sequence broken in the job by DuckDB's tie hash (auto-cdc/batch-reduction.ts),
 * and the rows it staged for the apply are deleted once the batch is done, without waiting for VACUUM.
 * The job applies the MERGE itself, SCD type 1 and 2 (spark-cdc-apply.ts).
 *
 * Equivalence (through the HTTP API, twin-pipelines.ts): SCD type 1 targets (deletes and truncates;
 * `ignore_null_updates`) and SCD type 2 targets (`track_history_column_list`;
 * `track_history_except_column_list` with `ignore_null_updates`), fed keys with many events per file, sequences out of order and tied,
 * get the same rows, change feed and per-key state whichever engine runs each update: a batch on
 * Spark then one on DuckDB and the reverse, and rewinds across a switch with replays.
 */

describe.skipIf(!sparkEngineReady)("an AUTO CDC batch on Spark", () => {
  let driver: LocalSparkJobs | undefined;
  // The worker's driver: the next file the interop config runs in this worker takes it on.
  const port = (prefix: string): SparkJobs => {
    const { endpoints, storage } = testAws();
    const shared = (driver ??= sharedLocalSparkJobs({
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

  it("evaluates apply_as_deletes in Spark SQL and applies the SCD type 1 and 2 MERGEs in the job", async () => {
    // The job's manifests, read before HEAD moves (the job's folder goes then).
    const manifests: {
      key: string;
      rowsIn: number;
      rowsOut: number;
      cdcApplied?: { rows: Record<string, number> };
      changeData?: unknown[];
    }[] = [];
    const harness: EngineHarness = new EngineHarness({
      spark: port,
      crash: async (point) => {
        if (point !== "before-head-move") return;
        for (const { key } of await listAllKeys(harness.store, "state/"))
          if (key.includes("/spark-jobs/") && key.endsWith("/manifest.json"))
            manifests.push({ key, ...JSON.parse(new TextDecoder().decode(await harness.store.get(key))) });
      },
    });
    try {
      const source = {
        type: "auto_loader",
        path: harness.landingUri,
        format: "json",
        schema: { id: "BIGINT", name: "VARCHAR", op: "VARCHAR", seq: "BIGINT" },
      };
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
                source,
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
          {
            type: "streaming_table",
            name: "customer_history",
            flows: [
              {
                name: "history",
                source,
                sql: "SELECT id, name, op, seq FROM source",
                auto_cdc: {
                  keys: ["id"],
                  sequence_by: "seq",
                  stored_as_scd_type: 2,
                  apply_as_deletes: "substr(op, 0, 1) = 'D'",
                  except_column_list: ["op", "seq"],
                },
              },
            ],
          },
        ],
      });
      // Key 1's events below its delete and key 2's below its latest pair (tied at 9) cannot decide
      // the table, nor the pair's loser by the tie rule, which the job breaks itself: it stages 1 + 1
      // of 6.
      const events = [
        { id: 1, name: "ada", op: "UPSERT", seq: 1 },
        { id: 2, name: "bob", op: "UPSERT", seq: 2 },
        { id: 1, name: null, op: "DELETE", seq: 3 },
        { id: 2, name: "bea", op: "UPSERT", seq: 9 },
        { id: 2, name: "bob", op: "UPSERT", seq: 9 },
        { id: 2, name: "bo", op: "UPSERT", seq: 4 },
      ];
      await harness.land("f0.json", events.map((e) => JSON.stringify(e)).join("\n") + "\n");
      const update = await harness.run(pipeline);
      expect(update.error).toBeUndefined();
      expect(update.state).toBe("COMPLETED");
      const rows = await harness.rows(pipeline, "customers", "id");
      // The tie at 9 goes to the row whose JSON hashes higher, as on DuckDB.
      expect(rows.map((r) => ({ id: Number(r["id"]), name: r["name"] }))).toEqual([{ id: 2, name: "bea" }]);
      expect(manifests).toHaveLength(2);
      const manifest = manifests.find((m) => m.key.includes("/spark-jobs/apply/"));
      // The job applied the MERGE: the one row left is the table's, written with the change feed.
      expect({ rowsIn: manifest!.rowsIn, rowsOut: manifest!.rowsOut }).toEqual({ rowsIn: 6, rowsOut: 1 });
      expect(manifest!.cdcApplied?.rows).toEqual({ inserted: 1, updated: 0, deleted: 0 });
      expect(manifest!.changeData).toHaveLength(1);
      // Each sequence a version, key 1's closed by its delete, the tie at 9 as above.
      const history = await harness.rows(pipeline, "customer_history", "id, __START_AT");
      expect(
        history.map((r) => [
          Number(r["id"]),
          r["name"],
          Number(r["__START_AT"]),
          r["__END_AT"] == null ? null : Number(r["__END_AT"]),
        ]),
      ).toEqual([
        [1, "ada", 1, 3],
        [2, "bob", 2, 4],
        [2, "bo", 4, 9],
        [2, "bea", 9, null],
      ]);
      const versions = manifests.find((m) => m.key.includes("/spark-jobs/history/"));
      expect(versions?.cdcApplied?.rows).toEqual({ inserted: 4, updated: 0, deleted: 0 });
      expect(await listAllKeys(harness.store, "state/")).not.toContainEqual(
        expect.objectContaining({ key: expect.stringContaining("/spark-jobs/") }),
      );

      const store = new DatasetCatalog(pipeline, harness.store).tableStore("customers");
      expect(
        (await listAllKeys(store, "spark/")).map((o) => o.key).filter((k) => k.endsWith(".parquet")),
      ).not.toEqual([]);
    } finally {
      await harness.close();
    }
  });
});

/** A target per kind of apply, each over the same files. */
const twinDefinition = (landing: string) => {
  const source = {
    type: "auto_loader",
    path: landing,
    format: "json",
    schema: { k: "BIGINT", seq: "BIGINT", name: "VARCHAR", v: "BIGINT", op: "VARCHAR" },
  };
  const target = (name: string, auto_cdc: Record<string, unknown>) => ({
    type: "streaming_table",
    name,
    flows: [
      {
        name: `${name}_cdc`,
        source,
        sql: "SELECT k, seq, name, v, op FROM source",
        auto_cdc: { keys: ["k"], sequence_by: "seq", except_column_list: ["op"], ...auto_cdc },
      },
    ],
  });
  return {
    datasets: [
      target("latest", {
        stored_as_scd_type: 1,
        apply_as_deletes: "op = 'DELETE'",
        apply_as_truncates: "op = 'TRUNCATE'",
      }),
      target("filled", {
        stored_as_scd_type: 1,
        apply_as_deletes: "op = 'DELETE'",
        ignore_null_updates: true,
      }),
      target("history", {
        stored_as_scd_type: 2,
        apply_as_deletes: "op = 'DELETE'",
        track_history_column_list: ["name"],
      }),
      target("versions", {
        stored_as_scd_type: 2,
        apply_as_deletes: "op = 'DELETE'",
        ignore_null_updates: true,
        track_history_except_column_list: ["seq", "v"],
      }),
    ],
  };
};
const TWIN_TARGETS = ["latest", "filled", "history", "versions"];

/**
 * Event `id`: three keys, sequences out of arrival order, ids nine apart tied on key and sequence with
 * other values (the tie rule decides), deletes, a truncate now and then, NULL names.
 */
const twinEvent = (id: number) => ({
  k: (id * 5) % 3,
  seq: (id * 7) % 9,
  name: id % 5 === 0 ? null : `n${id % 4}`,
  v: id,
  op: id % 13 === 0 ? "TRUNCATE" : id % 4 === 0 ? "DELETE" : "UPSERT",
});

describe.skipIf(!sparkEngineReady)("AUTO CDC on Spark against DuckDB alone", () => {
  let nextId = 1;
  const twins = twinsOnControlPlane();

  it("gives the same targets and per-key states, switching engines both ways and rewinding across a switch", async () => {
    const land = { kind: "land" as const, rows: 8 };
    await twins.play(
      {
        catalog: "spark_cdc",
        name: "spark cdc twins",
        definition: twinDefinition,
        tables: TWIN_TARGETS,
        lines: (rows) => Array.from({ length: rows }, () => JSON.stringify(twinEvent(nextId++))),
        // Every target's batches on Spark are applied in the job (MERGE, change feed, state).
        check: cdcTwinCheck(twins, {
          tables: TWIN_TARGETS,
          flows: TWIN_TARGETS.map((t) => `${t}_cdc`),
        }),
      },
      [
        land,
        { kind: "update", engine: "spark" },
        land,
        { kind: "update", engine: "duckdb" },
        land,
        land,
        { kind: "update", engine: "spark" },
        // Back to the state the first Spark batch left, the rest replayed on DuckDB; then back to
        // the replay's end and once more on Spark.
        { kind: "rewind", back: 3, engine: "duckdb" },
        land,
        { kind: "rewind", back: 1, engine: "spark" },
      ],
    );
  }, 1_200_000);
});
