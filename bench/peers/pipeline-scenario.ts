import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startInProcessPlane, type RecordTables } from "../in-process-plane.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { quoteLiteral } from "../../shared/duck/sql-text.ts";

/**
 * Issue 38's pipeline beside a plain DuckDB script on the same files: newline-delimited JSON →
 * `cleaned` (a streaming table reading them with auto_loader, filter and casts) → `totals` (a
 * materialized view aggregating `cleaned`). Ebb runs in process over a local-folder bucket (as
 * bench/engine.bench.ts does), its records in memory unless `EBB_BENCH_PEERS_TABLES=dynamodb-local`
 * (bench/in-process-plane.ts says why); the script reads the same JSON, writes the cleaned rows as Parquet and
 * the aggregate from them. The increment is one more file (1%): the script cleans that file alone and
 * recomputes the aggregate from every cleaned file, as a hand-written incremental script would.
 */

const FILES = 100;
const COLUMNS = { id: "BIGINT", amount: "BIGINT", region: "VARCHAR", ts: "VARCHAR" };
const CLEAN = (from: string) =>
  `SELECT id, CAST(amount AS DOUBLE) / 100 AS amount, upper(region) AS region, CAST(ts AS TIMESTAMP) AS ts ` +
  `FROM ${from} WHERE amount % 10 <> 0`;
const AGGREGATE = (from: string) =>
  `SELECT region, count(*) AS orders, sum(amount) AS revenue, max(ts) AS last_ts FROM ${from} GROUP BY region`;

export interface PipelineFigures {
  readonly first: number[];
  readonly increment: number[];
  readonly idle: number[];
}

/** `files` JSON files of `rowsPerFile` rows each, numbered from `first`, written by DuckDB. */
async function writeLanding(
  duck: DuckSession,
  folder: string,
  first: number,
  files: number,
  rowsPerFile: number,
) {
  await mkdir(folder, { recursive: true });
  for (let f = first; f < first + files; f++) {
    const file = path.join(folder, `part-${String(f).padStart(5, "0")}.json`);
    await duck.run(
      `COPY (SELECT ${f * rowsPerFile} + range AS id, (range * 7) % 1000 AS amount, ` +
        `['eu', 'us', 'apac'][range % 3 + 1] AS region, ` +
        `strftime(TIMESTAMP '2026-01-01' + to_seconds(range), '%Y-%m-%d %H:%M:%S') AS ts ` +
        `FROM range(${rowsPerFile})) TO ${quoteLiteral(file)} (FORMAT json)`,
    );
  }
}

function definition(name: string, landing: string) {
  return {
    name,
    catalog: "main",
    schema: name,
    datasets: [
      {
        type: "streaming_table",
        name: "cleaned",
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: landing, format: "json", schema: COLUMNS },
            sql: CLEAN("source"),
          },
        ],
      },
      { type: "materialized_view", name: "totals", sql: AGGREGATE("cleaned") },
    ],
  };
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** One pipeline's updates, each timed: the steps the figures and `profile-increment.ts` run. */
export interface EbbPipelineSteps {
  /** A fresh pipeline's first update over the 100 files (each call a new pipeline). */
  first(): Promise<number>;
  /** One more file (1%) into the landing folder, then an update of the last pipeline made. */
  increment(): Promise<number>;
  /** An update of the last pipeline with nothing new. */
  idle(): Promise<number>;
  close(): Promise<void>;
}

export async function ebbPipelineSteps(
  work: string,
  rows: number,
  tables: RecordTables,
): Promise<EbbPipelineSteps> {
  const rowsPerFile = rows / FILES;
  const duck = await DuckSession.open();
  const plane = await startInProcessPlane(work, { tables });
  const landing = path.join(work, "landing");
  await writeLanding(duck, landing, 0, FILES, rowsPerFile);
  const warm = path.join(work, "warm-up");
  await writeLanding(duck, warm, 0, 1, 100);
  await plane.update(definition("warm_up", warm)); // DynamoDB Local's JVM warms up
  let pipelines = 0;
  let extra = 0;
  const last = () => definition(`pipe_${pipelines - 1}`, landing);
  return {
    first: () => timed(() => plane.update(definition(`pipe_${pipelines++}`, landing))),
    increment: async () => {
      await writeLanding(duck, landing, FILES + extra++, 1, rowsPerFile);
      return timed(() => plane.update(last()));
    },
    idle: () => timed(() => plane.update(last())),
    close: async () => {
      await plane.close();
      duck.close();
    },
  };
}

/** Ebb's figures: `runs` fresh pipelines' first updates, then 1% increments and idle updates of the last. */
export async function ebbPipeline(
  work: string,
  rows: number,
  runs: number,
  tables: RecordTables,
): Promise<PipelineFigures> {
  const steps = await ebbPipelineSteps(work, rows, tables);
  try {
    const first: number[] = [];
    for (let i = 0; i < runs; i++) first.push(await steps.first());
    const increment: number[] = [];
    for (let i = 0; i < runs; i++) increment.push(await steps.increment());
    const idle: number[] = [];
    for (let i = 0; i < runs; i++) idle.push(await steps.idle());
    return { first, increment, idle };
  } finally {
    await steps.close();
  }
}

/** The DuckDB script's figures on the same shape of data, in a fresh in-memory DuckDB per run. */
export async function duckScript(work: string, rows: number, runs: number): Promise<PipelineFigures> {
  const rowsPerFile = rows / FILES;
  const duck = await DuckSession.open();
  try {
    const landing = path.join(work, "script-landing");
    await writeLanding(duck, landing, 0, FILES, rowsPerFile);
    const columns = `{${Object.entries(COLUMNS)
      .map(([n, t]) => `${quoteLiteral(n)}: ${quoteLiteral(t)}`)
      .join(", ")}}`;
    const json = (glob: string) =>
      `read_json(${quoteLiteral(glob)}, format = 'newline_delimited', columns = ${columns})`;
    const first: number[] = [];
    const increment: number[] = [];
    for (let i = 0; i < runs; i++) {
      const out = path.join(work, `script-${i}`);
      await mkdir(path.join(out, "cleaned"), { recursive: true });
      const cleaned = quoteLiteral(path.join(out, "cleaned", "*.parquet"));
      first.push(
        await timed(async () => {
          await duck.run(
            `COPY (${CLEAN(json(path.join(landing, "*.json")))}) TO ${quoteLiteral(path.join(out, "cleaned", "part-0.parquet"))} (FORMAT parquet)`,
          );
          await duck.run(
            `COPY (${AGGREGATE(`read_parquet(${cleaned})`)}) TO ${quoteLiteral(path.join(out, "totals.parquet"))} (FORMAT parquet)`,
          );
        }),
      );
    }
    const out = path.join(work, `script-${runs - 1}`);
    const cleaned = quoteLiteral(path.join(out, "cleaned", "*.parquet"));
    for (let i = 0; i < runs; i++) {
      const extra = path.join(work, `script-extra-${i}`);
      await writeLanding(duck, extra, FILES + i, 1, rowsPerFile);
      increment.push(
        await timed(async () => {
          await duck.run(
            `COPY (${CLEAN(json(path.join(extra, "*.json")))}) TO ${quoteLiteral(path.join(out, "cleaned", `part-${i + 1}.parquet`))} (FORMAT parquet)`,
          );
          await duck.run(
            `COPY (${AGGREGATE(`read_parquet(${cleaned})`)}) TO ${quoteLiteral(path.join(out, "totals.parquet"))} (FORMAT parquet)`,
          );
        }),
      );
    }
    await rm(landing, { recursive: true, force: true });
    return { first, increment, idle: [0] };
  } finally {
    duck.close();
  }
}
