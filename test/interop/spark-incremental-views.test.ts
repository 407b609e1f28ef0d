import { describe, expect, it } from "vitest";
import { currentSnapshot } from "../../shared/delta/index.ts";
import { viewStateAt } from "../../shared/engine/incremental-view.ts";
import { viewStateFlowId } from "../../shared/engine/materialized-view.ts";
import { Sandbox } from "../../shared/engine/sandbox.ts";
import { withPrefix } from "../../shared/object-store/prefixed-object-store.ts";
import { openStateVersion } from "../../shared/state/index.ts";
import { tablePrefix } from "../../shared/store/bucket-layout.ts";
import { testObjectStore } from "../support/aws.ts";
import { twinsOnControlPlane, type TwinStep } from "./twin-pipelines.ts";
import { sparkEngineReady } from "./spark-engine-ready.ts";

/**
 * Materialized views kept incrementally (a GROUP BY of decomposable aggregates over one table) on the
 * Spark engine, through the HTTP API on the local runtime, on real Spark.
 *
 * Twin pipelines (twin-pipelines.ts): one runs every update on DuckDB, the other the engine each step
 * names. A view's full recompute in a Spark update (its first load, a full refresh) runs on Spark,
 * which writes the view's partials in Ebb's state layout (spark-view-state.ts); the next refresh on
 * DuckDB merges the rows its input gained into them, across rewinds and replays. After each update
 * both pipelines' views hold the same rows, and their partials (the state version the view's table
 * names) the same rows in the same buckets, with the same schema, hash and meaning.
 */

const SCHEMA = { id: "BIGINT", k: "BIGINT", amount: "BIGINT", label: "VARCHAR" };
/** Integer keys (bucketed by fib32) and text keys (by md5-json), each with NULL keys and values. */
const VIEWS = ["totals", "labels"] as const;

const definition = (landing: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "raw",
      flows: [
        {
          name: "ingest",
          source: { type: "auto_loader", path: landing, format: "json", schema: SCHEMA },
          sql: "SELECT id, k, amount, label FROM source",
        },
      ],
    },
    {
      type: "materialized_view",
      name: "totals",
      sql: "SELECT k, count(*) AS n, count(amount) AS amounts, sum(amount) AS total, min(amount) AS lo, max(label) AS hi, avg(amount) AS mean FROM raw GROUP BY k",
    },
    {
      type: "materialized_view",
      name: "labels",
      sql: "SELECT label, count(DISTINCT k) AS ks, sum(DISTINCT amount) AS amounts, max(id) AS newest FROM raw GROUP BY label",
    },
  ],
});

describe.skipIf(!sparkEngineReady)("materialized views kept incrementally on the Spark engine", () => {
  let nextId = 1;
  const twins = twinsOnControlPlane();
  const cp = twins.cp;

  const row = (id: number) => ({
    id,
    k: id % 4 === 0 ? null : id % 3,
    amount: id % 7 === 0 ? null : (id * 7) % 11,
    label: id % 5 === 0 ? null : `l${id % 4}`,
  });

  /** The view's partials at HEAD: the state version its table names, read back as rows and buckets. */
  const viewState = async (pipelineId: string, view: string) => {
    const { spec } = await cp().client.getPipeline(pipelineId);
    const location = { catalog: spec!.catalog!, schema: spec!.schema!, table: view };
    // Ebb's bucket, as the local runtime's functions see it.
    const bucket = testObjectStore("");
    const viewStore = withPrefix(bucket, tablePrefix(location));
    const key = await viewStateAt(viewStore, (await currentSnapshot(viewStore)).version);
    const flow = { pipelineId, flowId: viewStateFlowId(view) };
    const version = await openStateVersion({ store: bucket, flow, version: key });
    const stored = version.manifest.tables["groups"];
    if (!stored) return { meaning: version.meta["view"], stored: null, rows: [] };
    const sandbox = await Sandbox.open();
    try {
      await version.table("groups", stored.schema).loadAll(sandbox, "__partials");
      const rows = await sandbox.rows("SELECT * FROM __partials ORDER BY ALL");
      return {
        meaning: version.meta["view"],
        stored: {
          schema: stored.schema,
          hash: stored.hash,
          buckets: stored.buckets,
          // Which bucket holds how many keys: the bucket hash of both engines, compared.
          parts: Object.fromEntries(Object.entries(stored.parts).map(([b, part]) => [b, part.rows])),
        },
        rows: JSON.parse(JSON.stringify(rows, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v))),
      };
    } finally {
      await sandbox.close();
    }
  };

  it("continues on DuckDB from the partials a Spark recompute wrote, across rewinds, replays and full refreshes", async () => {
    /** Each view refresh of the mixed twin: its engine and way, by step. */
    const refreshes: { step: string; view: string; engine?: string; refresh?: string }[] = [];
    const steps: TwinStep<number>[] = [
      { kind: "land", rows: 6 },
      // The first load: a full recompute, on Spark.
      { kind: "update", engine: "spark" },
      { kind: "land", rows: 4 },
      // Incremental on DuckDB, from the partials Spark wrote.
      { kind: "update", engine: "duckdb" },
      { kind: "land", rows: 3 },
      { kind: "update", engine: "spark" },
      // A rewind across the engine switch, and its replay.
      { kind: "rewind", back: 2, engine: "duckdb" },
      { kind: "land", rows: 3 },
      { kind: "refresh", engine: "spark" },
      { kind: "land", rows: 2 },
      { kind: "update", engine: "duckdb" },
      { kind: "rewind", back: 1, engine: "spark" },
      { kind: "land", rows: 2 },
      { kind: "update", engine: "duckdb" },
    ];
    await twins.play(
      {
        catalog: "spark_incremental_views",
        name: "spark incremental views",
        definition,
        tables: ["raw", ...VIEWS],
        lines: (rows) => Array.from({ length: rows }, () => JSON.stringify(row(nextId++))),
        // An incremental refresh stays on DuckDB in a Spark update; checked below instead.
        duckDbOnly: VIEWS,
        check: async ({ duck, mixed }, what) => {
          for (const p of await twins.progress(mixed.id, mixed.update))
            if (p.flow && (VIEWS as readonly string[]).includes(p.flow))
              refreshes.push({
                step: what,
                view: p.flow,
                ...(p.engine ? { engine: p.engine } : {}),
                ...("refresh" in p ? { refresh: String(p.refresh) } : {}),
              });
          for (const view of VIEWS)
            expect(await viewState(mixed.id, view), `${view}'s partials after ${what}`).toEqual(
              await viewState(duck.id, view),
            );
        },
      },
      steps,
    );
    // A full recompute in a Spark update ran on Spark, an incremental refresh on DuckDB...
    for (const r of refreshes) {
      const sparkStep = JSON.parse(r.step).engine === "spark";
      expect(r.engine, JSON.stringify(r)).toBe(
        sparkStep && r.refresh === "FULL_RECOMPUTE" ? "spark" : "duckdb",
      );
    }
    // ...and both happened to each view, an incremental refresh right after a Spark recompute.
    for (const view of VIEWS) {
      const mine = refreshes.filter((r) => r.view === view);
      const after = mine.findIndex((r) => r.engine === "spark");
      expect(after, `${view} was recomputed on Spark`).toBeGreaterThanOrEqual(0);
      expect(mine[after + 1]?.refresh, `${view} refreshed incrementally after`).toBe("INCREMENTAL");
    }
  }, 1_500_000);
});
