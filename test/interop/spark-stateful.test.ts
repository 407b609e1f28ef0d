import fc from "fast-check";
import { mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../support/control-plane.ts";

/**
 * Stateful flows and partitioned tables on the Spark engine, through the HTTP API on the local
 * runtime, on real Spark (functions/spark/setup.sh; run.sh exports EBB_SPARK_PYTHON and EBB_SPARK_JARS).
 *
 * Equivalence: twin pipelines get the same files; one runs every batch on DuckDB, the other each
 * update on an engine fast-check picks, with rewinds to a random earlier point (also across a switch)
 * and replays. After each update both pipelines' tables hold the same rows, and every stateful flow's
 * state version (read through the state reader: its tables, rows and watermark) is the same: the
 * two engines read and write one state layout with one bucket hash (`fib32` for the integer key,
 * `md5-json` for the string key), so a key one engine remembered is found by the other.
 */

const definition = (landing: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "events",
      // Hive-style folders on both engines; partition values as Delta spells them (a date, a string
      // with characters a path escapes, NULL).
      partition_by: ["day", "kind"],
      flows: [
        {
          name: "ingest",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql: "SELECT id, user, ts, kind, CAST(ts AS DATE) AS day FROM source",
          options: { max_files_per_batch: 2 },
        },
      ],
    },
    {
      // Deduplication by an integer key (fib32) straight from the files: the first row in arrival order
      // (file, then line) survives, whichever engine reads them.
      type: "streaming_table",
      name: "first_by_id",
      flows: [
        {
          name: "dedup_ids",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql: "SELECT id, user, ts FROM source",
          drop_duplicates: { keys: ["id"] },
          options: { max_files_per_batch: 3 },
        },
      ],
    },
    {
      // Deduplication by a string key (md5-json) within the watermark. From the files too: the rows of
      // one commit of a partitioned table have no order between its files, so which of two duplicates
      // in one batch is first would be either engine's choice.
      type: "streaming_table",
      name: "first_by_user",
      flows: [
        {
          name: "dedup_users",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql: "SELECT user, ts, id FROM source",
          watermark: { column: "ts", delay: "30 minutes" },
          drop_duplicates: { keys: ["user"], within_watermark: true },
        },
      ],
    },
    {
      // A watermark alone, from the partitioned table: late rows dropped, the watermark kept in the state.
      type: "streaming_table",
      name: "on_time",
      flows: [
        {
          name: "drop_late",
          source: { type: "stream", dataset: "events" },
          sql: "SELECT id, ts FROM source",
          watermark: { column: "ts", delay: "20 minutes" },
        },
      ],
    },
    {
      // Sliding windows per user (md5-json buckets of the window's start and a string key, NULL too),
      // every aggregate the Spark job keeps: a window is written once, when the watermark passes it.
      type: "streaming_table",
      name: "user_windows",
      flows: [
        {
          name: "windows_by_user",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql:
            "SELECT window.start AS start, user, count(*) AS n, sum(id) AS ids, min(ts) AS first_ts, " +
            "max(id) AS top, avg(id) AS mean_id FROM source WHERE id < 11 GROUP BY window(ts, '10 minutes', '5 minutes'), user",
          watermark: { column: "ts", delay: "10 minutes" },
          options: { max_files_per_batch: 2 },
        },
      ],
    },
    {
      // Tumbling windows from the partitioned table, the window selected whole (a struct).
      type: "streaming_table",
      name: "kind_windows",
      flows: [
        {
          name: "windows_by_kind",
          source: { type: "stream", dataset: "events" },
          sql: "SELECT window, kind, count(*) AS n FROM source GROUP BY window(ts, '20 minutes'), kind",
          watermark: { column: "ts", delay: "15 minutes" },
        },
      ],
    },
  ],
});
const SCHEMA = { id: "BIGINT", user: "VARCHAR", ts: "TIMESTAMP", kind: "VARCHAR" };
const STATEFUL_FLOWS = ["dedup_ids", "dedup_users", "drop_late", "windows_by_user", "windows_by_kind"];
const TABLES = ["events", "first_by_id", "first_by_user", "on_time", "user_windows", "kind_windows"];
const USERS = ["u1", "u2", "ü/3", "u 4", null];
const KINDS = ["a", "b/c", "d:e", null];

type Engine = "duckdb" | "spark";
/** `minute`: the event time's offset from the file's own time; null: a row without one (always late). */
type Row = { id: number; user: string | null; minute: number | null; kind: string | null };
type Step =
  | { kind: "land"; rows: Row[] }
  | { kind: "update"; engine: Engine }
  | { kind: "rewind"; back: number; engine: Engine };

const sparkEngineReady =
  process.env["EBB_SPARK_PYTHON"] !== undefined && process.env["EBB_SPARK_JARS"] !== undefined;

describe.skipIf(!sparkEngineReady)("stateful flows and partitioned tables on the Spark engine", () => {
  let cp: TestControlPlane;
  let file = 0;
  let pipelines = 0;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  }, 240_000);
  afterAll(async () => cp?.close());

  const run = async (pipelineId: string, body: unknown = {}) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, {
      intervalMs: 200,
      timeoutMs: 280_000,
    });
    if (update.state !== "COMPLETED") {
      const { events } = await cp.client.events(pipelineId, {
        filter: `level = 'ERROR' AND origin.update_id = '${update_id}'`,
      });
      throw new Error(
        `update ${update_id} ${update.state}: ${JSON.stringify(events.map((e) => (e as { error?: unknown }).error))}`,
      );
    }
    return update_id;
  };
  const configure = (landing: string, schema: string, engine: Engine) => ({
    name: `spark stateful ${schema}`,
    catalog: "spark_st",
    schema,
    configuration: { "pipelines.rewind.enabled": "true", "pipelines.engine": engine },
    definition: definition(landing),
  });
  const rows = async (schema: string, table: string) =>
    (
      await cp.client.query(`spark_st.${schema}.${table}`, {
        sql: "SELECT * FROM t ORDER BY ALL",
        limit: 10_000,
      })
    ).rows;
  /** A flow's state at HEAD as the state reader answers it, all pages, without the version's key. */
  const state = async (pipelineId: string, flow: string) => {
    let page = await cp.client.flowState(pipelineId, flow, { max_results: 1000 });
    const all = [...page.rows];
    while (page.next_page_token) {
      page = await cp.client.flowState(pipelineId, flow, {
        max_results: 1000,
        page_token: page.next_page_token,
      });
      all.push(...page.rows);
    }
    return { watermark: page.watermark, tables: page.tables, rows: all, empty: page.state_version === null };
  };
  const engines = async (pipelineId: string, updateId: string) => {
    const { events } = await cp.client.events(pipelineId, {
      filter: `event_type = 'flow_progress' AND origin.update_id = '${updateId}'`,
    });
    return events
      .map((e) => (e.details["flow_progress"] as { engine?: string } | undefined)?.engine)
      .filter((engine) => engine !== undefined);
  };

  it("gives the same tables and state versions as DuckDB alone, whichever engine runs each update, across rewinds", async () => {
    const row: fc.Arbitrary<Row> = fc.record({
      id: fc.integer({ min: 1, max: 12 }),
      user: fc.constantFrom(...USERS),
      // Event times mostly moving forward (the file's place), some far behind: late rows.
      minute: fc.option(fc.integer({ min: -60, max: 25 }), { freq: 8 }),
      kind: fc.constantFrom(...KINDS),
    });
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant("land" as const), rows: fc.array(row, { minLength: 1, maxLength: 5 }) }),
      fc.record({ kind: fc.constant("update" as const), engine: fc.constantFrom<Engine>("duckdb", "spark") }),
      fc.record({
        kind: fc.constant("rewind" as const),
        back: fc.integer({ min: 1, max: 3 }),
        engine: fc.constantFrom<Engine>("duckdb", "spark"),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 3 }), async (steps) => {
        const n = pipelines++;
        const schemas = { duck: `duck_${n}`, mixed: `mixed_${n}` };
        const landings = {
          duck: await mkdtemp(path.join(cp.landing, "duck-")),
          mixed: await mkdtemp(path.join(cp.landing, "mixed-")),
        };
        const ids = {
          duck: (await cp.client.createPipeline(configure(landings.duck, schemas.duck, "duckdb")))
            .pipeline_id,
          mixed: (await cp.client.createPipeline(configure(landings.mixed, schemas.mixed, "duckdb")))
            .pipeline_id,
        };
        const points: { duck: string; mixed: string }[] = [];
        const sparkRan: string[] = [];
        const first: Row = { id: 1, user: "u1", minute: 0, kind: "a" };
        const again: Row[] = [first, { ...first, id: 2, user: "u 4", kind: null }];
        // Every sequence starts with a batch on DuckDB and ends with one on Spark and one on DuckDB,
        // each with keys the state already holds: each engine looks up keys the other remembered.
        for (const s of [
          { kind: "land", rows: [first] } as Step,
          { kind: "update", engine: "duckdb" } as Step,
          ...steps,
          { kind: "land", rows: again } as Step,
          { kind: "update", engine: "spark" } as Step,
          { kind: "land", rows: again } as Step,
          { kind: "update", engine: "duckdb" } as Step,
        ]) {
          if (s.kind === "land") {
            const base = Date.UTC(2026, 0, 1, 12) + file * 10 * 60_000;
            const lines = s.rows
              .map((r) =>
                JSON.stringify({
                  id: r.id,
                  user: r.user,
                  ts:
                    r.minute === null ? null : new Date(base + r.minute * 60_000).toISOString().slice(0, 19),
                  kind: r.kind,
                }),
              )
              .join("\n");
            const name = `f${String(file++).padStart(5, "0")}.json`;
            await writeFile(path.join(landings.duck, name), lines + "\n");
            await writeFile(path.join(landings.mixed, name), lines + "\n");
            continue;
          }
          await cp.client.editPipeline(ids.mixed, configure(landings.mixed, schemas.mixed, s.engine));
          if (s.kind === "rewind") {
            const point = points.at(-Math.min(s.back, points.length));
            if (!point) continue;
            await run(ids.duck, { rewind_spec: { rewind_point_id: point.duck } });
            await run(ids.mixed, { rewind_spec: { rewind_point_id: point.mixed } });
          }
          await run(ids.duck);
          const updateId = await run(ids.mixed);
          if (s.engine === "spark") sparkRan.push(...(await engines(ids.mixed, updateId)));
          const captured = await Promise.all([
            cp.client.captureRewindPoint(ids.duck),
            cp.client.captureRewindPoint(ids.mixed),
          ]);
          points.push({ duck: captured[0].rewind_point_id, mixed: captured[1].rewind_point_id });
          const what = JSON.stringify(s);
          for (const table of TABLES)
            expect(await rows(schemas.mixed, table), `${table} after ${what}`).toEqual(
              await rows(schemas.duck, table),
            );
          for (const flow of STATEFUL_FLOWS)
            expect(await state(ids.mixed, flow), `${flow}'s state after ${what}`).toEqual(
              await state(ids.duck, flow),
            );
        }
        expect(sparkRan.length).toBeGreaterThan(0);
        expect(new Set(sparkRan)).toEqual(new Set(["spark"]));
      }),
      { numRuns: Number(process.env["EBB_SPARK_STATEFUL_RUNS"] ?? 1), endOnFailure: true },
    );
  }, 1_500_000);
});
