import { spawnSync } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { DeltaTable } from "../shared/delta/index.ts";
import { DuckSession } from "../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../shared/object-store/local-object-store.ts";
import { copyTree } from "./peers/copy-tree.ts";
import { ebbOp, PEER_OPS, type PeerOp, type PeerTables } from "./peers/ebb-ops.ts";
import { PEER_TABLE_SCHEMA, removedFilesTable } from "./peers/peer-tables.ts";
import { duckScript, ebbPipeline } from "./peers/pipeline-scenario.ts";

/**
 * Ebb beside its peers on the same data (issue 38's tables): every table operation against delta-rs
 * (`deltalake` from the interop suite's virtual environment, `bash test/interop/setup.sh`), each
 * timed inside its own process and printed as median and fastest of `EBB_BENCH_PEERS_RUNS` (default
 * 3) and the ratio Ebb / delta-rs (target <= 1.0), twice: a first call in a fresh process (what a CLI
 * call or a cold Lambda pays; Ebb's code is compiled as it first runs, delta-rs's ahead of time) and
 * warm, after `EBB_BENCH_PEERS_WARMUP` (default 3) untimed calls in one process. Both read one table
 * on the local disk, written by Ebb. Skipped with a line saying so where the environment is absent.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const venvPython = path.join(here, "..", ".ebb", "interop-venv", "bin", "python");
const RUNS = Number(process.env["EBB_BENCH_PEERS_RUNS"] ?? "3");
const WARMUP = Number(process.env["EBB_BENCH_PEERS_WARMUP"] ?? "3");
const COMMITS = 1000;
const CDF_COMMITS = 100;
const VACUUM_FILES = 1000;

const schema = PEER_TABLE_SCHEMA;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median and fastest of `RUNS` runs: on a shared machine the fastest is the least disturbed. */
interface Timing {
  readonly median: number;
  readonly fastest: number;
}

async function timeMs(work: () => Promise<unknown>, before?: () => Promise<unknown> | void): Promise<Timing> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await before?.();
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return { median: median(times), fastest: Math.min(...times) };
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** A table of `COMMITS` one-row commits after version 0 (checkpoint every 10, change data feed on). */
async function longLogTable(duck: DuckSession, root: string): Promise<void> {
  const table = await DeltaTable.create(
    new LocalObjectStore(root),
    {
      schema,
      properties: { "delta.checkpointInterval": "10", "delta.enableChangeDataFeed": "true" },
    },
    { duck },
  );
  for (let i = 1; i <= COMMITS; i++) await table.append({ rows: [{ id: i, p: 0, payload: `row ${i}` }] });
  await table.close();
}

type Figures = Record<PeerOp, Timing>;

/**
 * Each operation after `WARMUP` untimed calls of it, `RUNS` times timed, in this process: V8 has
 * compiled Ebb's code by then, as in a warm Lambda or the local runtime's long-lived process.
 */
async function ebbWarmFigures(duck: DuckSession, tables: PeerTables, vacuum: string): Promise<Figures> {
  let copy = 0;
  const figures: Partial<Figures> = {};
  for (const op of PEER_OPS) {
    const root = () => `${vacuum}-ebb-${copy}`;
    const fresh = async () => {
      if (op !== "vacuum") return;
      copy += 1;
      await copyTree(vacuum, root());
    };
    for (let i = 0; i < WARMUP; i++) await fresh().then(() => ebbOp(op, tables, duck, root()));
    figures[op] = await timeMs(() => ebbOp(op, tables, duck, root()), fresh);
  }
  return figures as Figures;
}

/**
 * Each operation's first call in a fresh process (`bench/peers/first-call.ts`), `RUNS` processes
 * each: what a CLI call or a Lambda's cold start pays, V8 compiling Ebb's code as it first runs
 * (delta-rs is compiled ahead of time: its first call pays only its own set-up).
 */
function ebbFirstCallFigures(tables: PeerTables, vacuum: string): Figures {
  const figures: Partial<Figures> = {};
  for (const op of PEER_OPS) {
    const times = Array.from({ length: RUNS }, (_, i) => {
      const args = { ...tables, op, vacuumSource: vacuum, vacuumCopy: `${vacuum}-ebb-first-${op}-${i}` };
      const child = spawnSync(
        process.execPath,
        [...process.execArgv, path.join(here, "peers", "first-call.ts"), JSON.stringify(args)],
        { encoding: "utf8" },
      );
      if (child.status !== 0) throw new Error(`Ebb's first call of ${op} failed: ${child.stderr}`);
      return lastJson<{ ms: number }>(child.stdout).ms;
    });
    figures[op] = { median: median(times), fastest: Math.min(...times) };
  }
  return figures as Figures;
}

function lastJson<T>(stdout: string): T {
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as T;
}

function deltaRs<T>(args: Record<string, unknown>): T {
  const child = spawnSync(venvPython, [path.join(here, "peers", "delta_rs_ops.py"), JSON.stringify(args)], {
    encoding: "utf8",
  });
  if (child.status !== 0) throw new Error(`delta-rs side failed: ${child.stderr}`);
  return lastJson<T>(child.stdout);
}

function deltaRsArgs(tables: PeerTables, vacuum: string): Record<string, unknown> {
  const { log, vacuumFiles, cdfFrom, commits } = tables;
  return { log, vacuum, vacuumFiles, cdfFrom, cdfTo: commits };
}

/** delta-rs's warm figures, as `ebbWarmFigures` (it also builds delta-rs's VACUUM table). */
function deltaRsWarmFigures(tables: PeerTables, vacuum: string): Figures {
  return deltaRs<Figures>({ ...deltaRsArgs(tables, vacuum), mode: "warm", runs: RUNS, warmup: WARMUP });
}

/** delta-rs's first calls, as `ebbFirstCallFigures`: a fresh Python process each (deltalake imported untimed). */
function deltaRsFirstCallFigures(tables: PeerTables, vacuum: string): Figures {
  const figures: Partial<Figures> = {};
  for (const op of PEER_OPS) {
    const times = Array.from(
      { length: RUNS },
      () => deltaRs<{ ms: number }>({ ...deltaRsArgs(tables, vacuum), mode: "first", op }).ms,
    );
    figures[op] = { median: median(times), fastest: Math.min(...times) };
  }
  return figures as Figures;
}

const LABELS: Record<PeerOp, string> = {
  snapshotV10: `snapshot as of v10 of a ${COMMITS.toLocaleString("en")}-commit table`,
  snapshotV1000: `snapshot as of v${COMMITS}`,
  snapshotLatest: "latest snapshot load",
  timeTravelRead: "time-travel read at v10 (open + read)",
  changeFeed: `change feed of ${CDF_COMMITS} one-row commits`,
  vacuum: `VACUUM of ${VACUUM_FILES.toLocaleString("en")} removed files`,
};

const PIPELINE_ROWS = Number(process.env["EBB_BENCH_PEERS_ROWS"] ?? "1000000");

/** The pipeline beside the DuckDB script (no peer environment needed). */
async function pipelineFigures(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "ebb-peers-pipeline-"));
  try {
    const tables = process.env["EBB_BENCH_PEERS_TABLES"] === "dynamodb-local" ? "dynamodb-local" : "memory";
    const ebb = await ebbPipeline(path.join(dir, "ebb"), PIPELINE_ROWS, RUNS, tables);
    const script = await duckScript(dir, PIPELINE_ROWS, RUNS);
    const rows = PIPELINE_ROWS.toLocaleString("en");
    console.log(
      `| pipeline, ${rows} JSON rows → cleaned → aggregate (ms, median of ${RUNS}) | Ebb | DuckDB script | ratio (target) |`,
    );
    console.log("|---|---|---|---|");
    const line = (label: string, e: number[], s: number[], target: string) =>
      console.log(
        `| ${label} | ${median(e).toFixed(0)} | ${median(s).toFixed(0)} | ${(median(e) / median(s)).toFixed(2)}x (${target}) |`,
      );
    line("first update", ebb.first, script.first, "<= 1.5");
    line("1% increment", ebb.increment, script.increment, "<= 2");
    console.log(`| an update with nothing new | ${median(ebb.idle).toFixed(0)} | — | (target <= 100 ms) |`);
    console.log(
      `(Ebb's records in ${tables}; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")})`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const only = process.env["EBB_BENCH_PEERS_ONLY"];
  if (only !== "tables") await pipelineFigures();
  if (only === "pipeline") return;
  const hasDeltaRs =
    (await exists(venvPython)) && spawnSync(venvPython, ["-c", "import deltalake"]).status === 0;
  if (!hasDeltaRs) {
    console.log(`peers: skipped, no deltalake at ${venvPython} (run: bash test/interop/setup.sh)`);
    return;
  }
  // Building the tables takes minutes on a loaded host, with nothing printed meanwhile: say so, or
  // the pipeline's table looks like the whole output.
  console.log(
    `tables: building a ${COMMITS.toLocaleString("en")}-commit table and a ${VACUUM_FILES.toLocaleString("en")}-file one, then timing Ebb and delta-rs (load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")})…`,
  );
  const dir = await mkdtemp(path.join(tmpdir(), "ebb-peers-"));
  const duck = await DuckSession.open();
  try {
    const log = path.join(dir, "long-log");
    const vacuum = path.join(dir, "vacuum");
    await longLogTable(duck, log);
    await removedFilesTable(duck, vacuum, VACUUM_FILES);
    const tables: PeerTables = {
      log,
      commits: COMMITS,
      cdfFrom: COMMITS - CDF_COMMITS + 1,
      vacuumFiles: VACUUM_FILES,
    };
    // delta-rs's warm run first: it builds the VACUUM table its first calls read.
    const rsWarm = deltaRsWarmFigures(tables, vacuum);
    const ebbWarm = await ebbWarmFigures(duck, tables, vacuum);
    const ebbFirst = ebbFirstCallFigures(tables, vacuum);
    const rsFirst = deltaRsFirstCallFigures(tables, vacuum);
    const pair = (t: Timing) => `${t.median.toFixed(1)} / ${t.fastest.toFixed(1)}`;
    const ratio = (e: Timing, r: Timing) => `${(e.median / r.median).toFixed(2)}x`;
    console.log(
      `| work (ms, median / fastest of ${RUNS}) | first call: Ebb | delta-rs | ratio | warm (after ${WARMUP}): Ebb | delta-rs | ratio (target <= 1.0) |`,
    );
    console.log("|---|---|---|---|---|---|---|");
    for (const op of PEER_OPS) {
      console.log(
        `| ${LABELS[op]} | ${pair(ebbFirst[op])} | ${pair(rsFirst[op])} | ${ratio(ebbFirst[op], rsFirst[op])} | ${pair(ebbWarm[op])} | ${pair(rsWarm[op])} | ${ratio(ebbWarm[op], rsWarm[op])} |`,
      );
    }
    console.log(
      "(first call: each in a fresh process, modules loaded first, as a CLI call or a cold Lambda; " +
        "warm: in one process after untimed calls, as a warm Lambda or the local runtime)",
    );
    console.log(
      `(load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")})`,
    );
  } finally {
    duck.close();
    await rm(dir, { recursive: true, force: true });
  }
}
