import { spawnSync } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { DeltaTable, forgetDecodedCheckpoints, loadSnapshot } from "../shared/delta/index.ts";
import { DuckSession } from "../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../shared/object-store/local-object-store.ts";
import { copyTree } from "./peers/copy-tree.ts";
import { PEER_TABLE_SCHEMA, removedFilesTable } from "./peers/peer-tables.ts";
import { duckScript, ebbPipeline } from "./peers/pipeline-scenario.ts";

/**
 * Ebb beside its peers on the same data (issue 38's tables): every table operation against delta-rs
 * (`deltalake` from the interop suite's virtual environment, `bash test/interop/setup.sh`), each
 * timed inside its own process and printed as median and fastest of `EBB_BENCH_PEERS_RUNS` (default 3) and the
 * ratio Ebb / delta-rs (target <= 1.0). Both read one table on the local disk, written by Ebb.
 * Skipped with a line saying so where the environment is absent.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const venvPython = path.join(here, "..", ".ebb", "interop-venv", "bin", "python");
const RUNS = Number(process.env["EBB_BENCH_PEERS_RUNS"] ?? "3");
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

type Figures = Record<
  "snapshotV10" | "snapshotV1000" | "snapshotLatest" | "timeTravelRead" | "changeFeed" | "vacuum",
  Timing
>;

async function ebbFigures(duck: DuckSession, log: string, vacuum: string): Promise<Figures> {
  const store = new LocalObjectStore(log);
  // Cold, as a task's first load: no checkpoint taken from the process's cache.
  const cold = () => forgetDecodedCheckpoints();
  const snapshotAt = (version?: number) => () =>
    loadSnapshot(store, version === undefined ? {} : { version });
  const open = async <T>(work: (table: DeltaTable) => Promise<T>) => {
    const table = await DeltaTable.open(store, { duck });
    try {
      return await work(table);
    } finally {
      await table.close();
    }
  };
  let copy = 0;
  const vacuumOnce = async () => {
    const root = `${vacuum}-ebb-${copy}`;
    const table = await DeltaTable.open(new LocalObjectStore(root), { duck });
    const result = await table.vacuum({ retentionHours: 0, allowShortRetention: true });
    if (result.filesToDelete.length !== VACUUM_FILES)
      throw new Error(`Ebb vacuum deleted ${result.filesToDelete.length} files`);
    await table.close();
  };
  return {
    snapshotV10: await timeMs(snapshotAt(10), cold),
    snapshotV1000: await timeMs(snapshotAt(COMMITS), cold),
    snapshotLatest: await timeMs(snapshotAt(), cold),
    // As `ebb table scan --version 10` reads: that version alone, as delta-rs's `DeltaTable(path, version=10)`.
    timeTravelRead: await timeMs(() => DeltaTable.scanAt(store, { version: 10 }, { duck }), cold),
    changeFeed: await timeMs(() => open((table) => table.changes(COMMITS - CDF_COMMITS + 1, COMMITS)), cold),
    vacuum: await timeMs(vacuumOnce, async () => {
      copy += 1;
      await copyTree(vacuum, `${vacuum}-ebb-${copy}`);
    }),
  };
}

function deltaRsFigures(log: string, vacuum: string): Figures {
  const args = {
    runs: RUNS,
    log,
    vacuum,
    vacuumFiles: VACUUM_FILES,
    cdfFrom: COMMITS - CDF_COMMITS + 1,
    cdfTo: COMMITS,
  };
  const child = spawnSync(venvPython, [path.join(here, "peers", "delta_rs_ops.py"), JSON.stringify(args)], {
    encoding: "utf8",
  });
  if (child.status !== 0) throw new Error(`delta-rs side failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Figures;
}

const LABELS: Record<keyof Figures, string> = {
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
    const ebb = await ebbFigures(duck, log, vacuum);
    const rs = deltaRsFigures(log, vacuum);
    console.log(
      `| work (ms, median / fastest of ${RUNS}) | Ebb | delta-rs | ratio of medians (target <= 1.0) | ratio of fastest |`,
    );
    console.log("|---|---|---|---|---|");
    const pair = (t: Timing) => `${t.median.toFixed(1)} / ${t.fastest.toFixed(1)}`;
    for (const key of Object.keys(LABELS) as (keyof Figures)[]) {
      const [e, r] = [ebb[key], rs[key]];
      console.log(
        `| ${LABELS[key]} | ${pair(e)} | ${pair(r)} | ${(e.median / r.median).toFixed(2)}x | ${(e.fastest / r.fastest).toFixed(2)}x |`,
      );
    }
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
