import { rm } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import {
  DeltaTable,
  forgetDecodedCheckpoints,
  loadSnapshot,
  snapshotTombstones,
  type StructType,
} from "../shared/delta/index.ts";
import { DuckSession } from "../shared/duck/duck-session.ts";
import { ScratchFolder } from "../shared/duck/scratch-folder.ts";
import { MemoryObjectStore } from "../shared/object-store/memory-object-store.ts";

/**
 * Delta writer figures, measured in one run on a MemoryObjectStore (no network: what is measured is
 * Ebb's own work and DuckDB's). Each figure is printed as median and fastest of several runs: on a
 * shared machine the fastest is the least disturbed.
 *
 * 1. RESTORE cost grows with files, not bytes: restore of 1,000,000 rows vs 10,000 rows in the same
 *    number of files (target ratio <= 1.2), and restore time at 10 / 100 / 1,000 files.
 * 2. Latest snapshot load after 1,000 commits vs after 10, with checkpoints every 10 commits
 *    (target ratio <= 2): with the same 10 files; with one new file per commit under
 *    auto-compaction, as pipeline tables have it (the files stay few, the compacted ones' tombstones
 *    fill the checkpoint, read apart); and with one new file per commit and no compaction, 1,000
 *    live files (the figure for a table nothing compacts).
 * 3. Append throughput for 1,000,000 rows vs DuckDB's own `COPY ... TO parquet` of the same rows
 *    (target ratio >= 0.5).
 *
 * `EBB_BENCH_DELTA` (`restore`, `snapshot` or `append`, comma-separated) runs only those figures.
 */

const schema: StructType = {
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: false, metadata: {} },
    { name: "p", type: "integer", nullable: false, metadata: {} },
    { name: "payload", type: "string", nullable: true, metadata: {} },
    { name: "amount", type: "double", nullable: true, metadata: {} },
  ],
};

const rowsSql = (rows: number, files: number) =>
  `SELECT range AS id, CAST(range % ${files} AS INTEGER) AS p, 'payload-' || range AS payload, ` +
  `CAST(range * 0.5 AS DOUBLE) AS amount FROM range(${rows})`;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The fastest of several runs: the least disturbed by other work on a shared machine. */
function fastest(values: number[]): number {
  return Math.min(...values);
}

/** A table whose version 0 holds `rows` rows in `files` files (one per partition), emptied at version 1. */
async function restoreFixture(duck: DuckSession, rows: number, files: number): Promise<DeltaTable> {
  const table = await DeltaTable.create(
    new MemoryObjectStore(),
    {
      schema,
      partitionColumns: ["p"],
      // No checkpoint inside a timed restore.
      properties: { "delta.checkpointInterval": "1000000" },
      rows: { sql: rowsSql(rows, files) },
    },
    { duck },
  );
  if (table.snapshot.files.size !== files)
    throw new Error(`expected ${files} files, got ${table.snapshot.files.size}`);
  return table;
}

/** Time of one RESTORE to version 0 (every file re-added), after a DELETE of everything. */
async function restoreOnce(table: DeltaTable): Promise<number> {
  await table.delete();
  const { ms, value } = await timed(() => table.restore({ to: { version: 0 } }));
  if (value.status !== "committed" || value.operationMetrics.numRestoredFiles !== table.snapshot.files.size) {
    throw new Error("restore did not re-add every file");
  }
  return ms;
}

async function benchRestore(duck: DuckSession): Promise<void> {
  const big = await restoreFixture(duck, 1_000_000, 10);
  const small = await restoreFixture(duck, 10_000, 10);
  for (let i = 0; i < 3; i++) await restoreOnce(small); // warm-up
  // Alternate the two tables so both see the same machine load.
  const bigTimes: number[] = [];
  const smallTimes: number[] = [];
  for (let i = 0; i < 21; i++) {
    bigTimes.push(await restoreOnce(big));
    smallTimes.push(await restoreOnce(small));
  }
  console.log(
    `RESTORE, 10 files (median / fastest of 21): 1,000,000 rows ${median(bigTimes).toFixed(2)} / ${fastest(bigTimes).toFixed(2)} ms, ` +
      `10,000 rows ${median(smallTimes).toFixed(2)} / ${fastest(smallTimes).toFixed(2)} ms`,
  );
  console.log(
    `  ratio 1M/10k rows = ${(median(bigTimes) / median(smallTimes)).toFixed(2)} median, ` +
      `${(fastest(bigTimes) / fastest(smallTimes)).toFixed(2)} fastest (target <= 1.2)`,
  );
  await Promise.all([big.close(), small.close()]);
  for (const files of [10, 100, 1000]) {
    const table = await restoreFixture(duck, 10_000, files);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) times.push(await restoreOnce(table));
    console.log(
      `RESTORE of ${files} files (median / fastest of 5): ${median(times).toFixed(2)} / ${fastest(times).toFixed(2)} ms`,
    );
    await table.close();
  }
}

/**
 * Builds a table over 1,000 commits (checkpoint every 10) with `commitAt(i)` as commit i, and
 * returns the median / fastest latest-snapshot load after commit 10 (a copy of the store then) and
 * after commit 1,000.
 */
async function snapshotLoadAt10And1000(
  duck: DuckSession,
  definition: Parameters<typeof DeltaTable.create>[1],
  commitAt: (table: DeltaTable, i: number) => Promise<unknown>,
) {
  const store = new MemoryObjectStore();
  const table = await DeltaTable.create(store, definition, { duck });
  const storeAt10 = new MemoryObjectStore();
  for (let i = 1; i <= 1000; i++) {
    await commitAt(table, i);
    if (i === 10) for (const key of await keysOf(store)) await storeAt10.put(key, await store.get(key));
  }
  await table.close();
  const loadTimes = async (s: MemoryObjectStore) => {
    const times: number[] = [];
    // Cold, as a task's first load in a fresh process: its checkpoint decoded, not taken from the process's cache.
    for (let i = 0; i < 15; i++) {
      forgetDecodedCheckpoints();
      times.push((await timed(() => loadSnapshot(s))).ms);
    }
    const snapshot = await loadSnapshot(s);
    return {
      median: median(times),
      fastest: fastest(times),
      version: snapshot.version,
      files: snapshot.files.size,
      tombstones: (await snapshotTombstones(snapshot)).size,
    };
  };
  await loadTimes(storeAt10); // warm-up
  return { at10: await loadTimes(storeAt10), at1000: await loadTimes(store) };
}

function printLoad(label: string, result: Awaited<ReturnType<typeof snapshotLoadAt10And1000>>): void {
  const { at10, at1000 } = result;
  const shape = (at: typeof at10) =>
    `version ${at.version.toLocaleString("en")}, ${at.files} files, ${at.tombstones} tombstones`;
  console.log(
    `latest snapshot load, ${label} (median / fastest of 15): after 10 commits (${shape(at10)}) ` +
      `${at10.median.toFixed(2)} / ${at10.fastest.toFixed(2)} ms, after 1,000 (${shape(at1000)}) ` +
      `${at1000.median.toFixed(2)} / ${at1000.fastest.toFixed(2)} ms`,
  );
  console.log(
    `  ratio 1000/10 = ${(at1000.median / at10.median).toFixed(2)} median, ` +
      `${(at1000.fastest / at10.fastest).toFixed(2)} fastest (target <= 2)`,
  );
}

async function benchSnapshotLoad(duck: DuckSession): Promise<void> {
  const properties = { "delta.checkpointInterval": "10" };
  // Same live files at both versions: 10 files at version 0, then micro-batch commits that carry
  // only their txn (no new rows), so only the length of the log differs.
  printLoad(
    "same 10 files, log length differs",
    await snapshotLoadAt10And1000(
      duck,
      { schema, partitionColumns: ["p"], properties, rows: { sql: rowsSql(10_000, 10) } },
      (table, i) => table.append({ rows: [] }, { txn: { appId: "bench/flow", version: i } }),
    ),
  );
  // One new file per commit, as a pipeline's tables have them: auto-compaction keeps the files few.
  const oneFile = (table: DeltaTable, i: number) =>
    table.append({ rows: [{ id: i, p: 0, payload: `row ${i}`, amount: i }] });
  printLoad(
    "one new file per commit, auto-compaction on",
    await snapshotLoadAt10And1000(
      duck,
      { schema, properties: { ...properties, "delta.autoOptimize.autoCompact": "true" } },
      oneFile,
    ),
  );
  // Nothing compacts: after 1,000 commits the table has 100 times the files it had after 10.
  printLoad(
    "one new file per commit, no compaction",
    await snapshotLoadAt10And1000(duck, { schema, properties }, oneFile),
  );
}

async function keysOf(store: MemoryObjectStore): Promise<string[]> {
  const page = await store.list("", { pageSize: 100_000 });
  return page.objects.map((o) => o.key);
}

async function benchAppend(duck: DuckSession): Promise<void> {
  const rows = 1_000_000;
  const sql = rowsSql(rows, 1);
  const scratch = await ScratchFolder.create();
  const copyTimes: number[] = [];
  const appendTimes: number[] = [];
  try {
    for (let i = 0; i < 5; i++) {
      const target = path.join(scratch.dir, `copy-${i}.parquet`);
      copyTimes.push(
        (await timed(() => duck.run(`COPY (${sql}) TO '${target}' (FORMAT parquet, COMPRESSION snappy)`))).ms,
      );
      await rm(target);
      const table = await DeltaTable.create(new MemoryObjectStore(), { schema }, { duck });
      appendTimes.push((await timed(() => table.append({ sql }))).ms);
      await table.close();
    }
  } finally {
    await scratch.dispose();
  }
  const rate = (ms: number) => rows / (ms / 1000);
  const format = (ms: number) => Math.round(rate(ms)).toLocaleString("en");
  console.log(
    `append 1,000,000 rows (median / fastest of 5): Ebb ${format(median(appendTimes))} / ${format(fastest(appendTimes))} rows/s, ` +
      `DuckDB COPY ${format(median(copyTimes))} / ${format(fastest(copyTimes))} rows/s`,
  );
  console.log(
    `  ratio Ebb/DuckDB = ${(median(copyTimes) / median(appendTimes)).toFixed(2)} median, ` +
      `${(fastest(copyTimes) / fastest(appendTimes)).toFixed(2)} fastest (target >= 0.5)`,
  );
}

const FIGURES = { restore: benchRestore, snapshot: benchSnapshotLoad, append: benchAppend };

export async function run(): Promise<void> {
  const only = process.env["EBB_BENCH_DELTA"]?.split(",");
  const unknown = only?.filter((name) => !(name in FIGURES));
  if (unknown?.length)
    throw new Error(`EBB_BENCH_DELTA: no figure ${unknown.join(", ")} (${Object.keys(FIGURES).join(", ")})`);
  const duck = await DuckSession.open();
  try {
    for (const [name, figure] of Object.entries(FIGURES)) {
      if (!only || only.includes(name)) await figure(duck);
    }
  } finally {
    duck.close();
  }
}
