import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { twinsOnControlPlane, twinStep } from "./twin-pipelines.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * Change-feed reads on the Spark engine, through the HTTP API on the local runtime, on real Spark
 * (functions/spark/setup.sh; run.sh exports EBB_SPARK_PYTHON and EBB_SPARK_JARS).
 *
 * Twin pipelines (twin-pipelines.ts): one runs every batch on DuckDB, the other each update on an
 * engine fast-check picks, with rewinds (also across a switch) and replays. Downstream flows read an
 * AUTO CDC target as a stream (its change feed: the MERGE's `cdc` files, with inserts, update images
 * and deletes, written by either engine) and an append-only table with `read_change_feed` (its
 * added files as inserts: no `cdc` files). After each update both pipelines' tables hold the same
 * rows, `_change_type` and `_commit_version` included; and in each pipeline every row's
 * `_commit_timestamp` is its upstream commit's, as the table's own change feed (the API's
 * `table_changes`) dates it. The timestamps are checked within a pipeline, not across the twins,
 * whose commits are made at different times.
 */

const EVENT_SCHEMA = { id: "BIGINT", k: "BIGINT", name: "VARCHAR", seq: "BIGINT", op: "VARCHAR" };

const definition = (landing: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "ingest",
          source: { type: "auto_loader", path: landing, format: "json", schema: EVENT_SCHEMA },
          sql: "SELECT id, k, name, seq, op FROM source",
          options: { max_files_per_batch: 2 },
        },
      ],
    },
    {
      type: "streaming_table",
      name: "current",
      flows: [
        {
          name: "current_cdc",
          source: { type: "stream", dataset: "raw" },
          sql: "SELECT k, seq, name, op FROM source",
          auto_cdc: {
            keys: ["k"],
            sequence_by: "seq",
            apply_as_deletes: "op = 'DELETE'",
            except_column_list: ["op"],
            stored_as_scd_type: 1,
          },
        },
      ],
    },
    {
      // The AUTO CDC target read as a stream: its change feed, every change type.
      type: "streaming_table",
      name: "current_changes",
      flows: [
        {
          name: "follow_current",
          source: { type: "stream", dataset: "current" },
          sql: "SELECT k, seq, name, _change_type AS change_type, _commit_version AS version FROM source",
        },
      ],
    },
    {
      // Each change row's commit: its time is checked against the upstream's own feed.
      type: "streaming_table",
      name: "current_commits",
      flows: [
        {
          name: "date_current",
          source: { type: "stream", dataset: "current" },
          sql: "SELECT _commit_version AS version, _commit_timestamp AS committed_at, _change_type AS change_type FROM source",
        },
      ],
    },
    {
      // An append-only table's feed: its added files' rows as inserts (no `cdc` files).
      type: "streaming_table",
      name: "raw_changes",
      flows: [
        {
          name: "follow_raw",
          source: { type: "stream", dataset: "raw" },
          sql: "SELECT id, k, _change_type AS change_type, _commit_version AS version FROM source",
          options: { read_change_feed: true, max_files_per_batch: 1 },
        },
      ],
    },
  ],
});

describe.skipIf(!sparkEngineReady)("change-feed reads on the Spark engine", () => {
  let nextId = 1;
  const twins = twinsOnControlPlane();
  const cp = twins.cp;
  /** The change types the mixed twin's feed readers saw, over the whole run. */
  const seen = new Set<string>();

  // Three keys, every fourth event's sequence behind its predecessors', every fifth a delete: inserts,
  // updates (both images) and deletes in the feed. Id 5 deletes key 2 (last written at sequence 2).
  const event = (id: number) => ({
    id,
    k: id % 3,
    name: `n${id}`,
    seq: id % 4 === 0 ? id - 2 : id,
    op: id % 5 === 0 ? "DELETE" : "UPSERT",
  });

  /** Each commit's time in the upstream's own change feed, by version (epoch ms). */
  const commitTimes = async (table: string, versions: readonly number[]) => {
    const times = new Map<number, number>();
    for (const version of versions) {
      const { changes } = await cp().client.changes(table, {
        starting_version: version,
        ending_version: version,
        max_results: 1,
      });
      const at = changes[0]?.["_commit_timestamp"];
      if (at !== undefined) times.set(version, Date.parse(String(at)));
    }
    return times;
  };

  /** Every row of the pipeline's `current_commits` is dated as its upstream version is. */
  const checkCommitTimes = async (pipelineId: string, what: string, types?: Set<string>) => {
    const { spec } = await cp().client.getPipeline(pipelineId);
    const fqn = (table: string) => `${spec.catalog}.${spec.schema}.${table}`;
    const { rows } = await cp().client.query(fqn("current_commits"), {
      sql: "SELECT DISTINCT version, committed_at, change_type FROM t",
      limit: 10_000,
    });
    for (const row of rows) types?.add(String(row["change_type"]));
    const versions = [...new Set(rows.map((row) => Number(row["version"])))];
    const times = await commitTimes(fqn("current"), versions);
    for (const row of rows)
      expect(Date.parse(String(row["committed_at"])), `version ${row["version"]}'s time after ${what}`).toBe(
        times.get(Number(row["version"])),
      );
  };

  it("reads the change feed as DuckDB does, whichever engine runs each update, across rewinds and replays", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(twinStep(fc.integer({ min: 2, max: 5 })), { minLength: 2, maxLength: 4 }),
        (steps) =>
          twins.play(
            {
              catalog: "spark_cdf",
              name: "spark change feed",
              definition,
              tables: ["current", "current_changes", "raw_changes"],
              lines: (rows) => Array.from({ length: rows }, () => JSON.stringify(event(nextId++))),
              check: async ({ duck, mixed }, what) => {
                await checkCommitTimes(duck.id, what);
                await checkCommitTimes(mixed.id, what, seen);
              },
            },
            // Files first (the readers have no upstream before one), then updates alternating
            // engines whatever fast-check adds: every sequence meets Spark after DuckDB and before it,
            // the first Spark batch a delete (id 5, alone: the last event of its key).
            [
              { kind: "land", rows: 4 },
              { kind: "update", engine: "duckdb" },
              { kind: "land", rows: 1 },
              { kind: "update", engine: "spark" },
              ...steps,
              { kind: "land", rows: 3 },
              { kind: "update", engine: "spark" },
            ],
          ),
      ),
      { numRuns: Number(process.env["EBB_SPARK_CHANGE_FEED_RUNS"] ?? 1), endOnFailure: true },
    );
    // The feed the readers followed had every change type.
    expect([...seen].sort()).toEqual(["delete", "insert", "update_postimage", "update_preimage"]);
  }, 1_500_000);
});
