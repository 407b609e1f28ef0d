import { rm, stat, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import path from "node:path";
import { PerformanceObserver, performance } from "node:perf_hooks";
import { loadavg } from "node:os";
import { DeltaTable } from "../../shared/delta/index.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";
import { copyTree } from "./copy-tree.ts";
import { removedFilesTable } from "./peer-tables.ts";

/**
 * `tsx bench/peers/vacuum-runs.ts <dir> [runs]`: the peers bench's VACUUM (`vacuumOnce`) `runs` times
 * in one process, each on a fresh copy of one table of 1,000 partitions whose 1,000 files were all
 * removed at version 1 (built once under `<dir>/vacuum`). Each run's wall, CPU (the process's,
 * steadier on a loaded host) and garbage collection pauses, in ms, the first apart from the median of
 * the rest. With `PROFILE_OUT=<file>.cpuprofile` each run is CPU-profiled into
 * `<file>-<run>.cpuprofile`.
 */
const FILES = 1000;
const [dir = "/tmp/ebb-vacuum-runs", runsText = "7"] = process.argv.slice(2);
const source = path.join(dir, "vacuum");
const duck = await DuckSession.open();

if (
  !(await stat(source).then(
    () => true,
    () => false,
  ))
) {
  await removedFilesTable(duck, source, FILES);
}

const session = new Session();
const profile = process.env["PROFILE_OUT"];
if (profile) {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
}
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ["gc"] });

/** The store, timing its walk and its deletes: where a run's wall time went. */
class TimedStore extends LocalObjectStore {
  listMs = 0;
  deleteMs = 0;
  override async listKeys(prefix: string): Promise<string[]> {
    const start = performance.now();
    try {
      return await super.listKeys(prefix);
    } finally {
      this.listMs += performance.now() - start;
    }
  }
  override async deleteMany(keys: readonly string[]): Promise<void> {
    const start = performance.now();
    try {
      await super.deleteMany(keys);
    } finally {
      this.deleteMs += performance.now() - start;
    }
  }
}

const rows: { wall: number; cpu: number; gc: number; open: number; list: number; del: number }[] = [];
for (let r = 0; r < Number(runsText); r++) {
  const root = `${source}-run-${process.pid}-${r}`;
  await copyTree(source, root);
  if (profile) await session.post("Profiler.start");
  const [start, cpu, gcBefore] = [performance.now(), process.cpuUsage(), gcMs];
  const store = new TimedStore(root);
  const table = await DeltaTable.open(store, { duck });
  const opened = performance.now() - start;
  const result = await table.vacuum({ retentionHours: 0, allowShortRetention: true });
  await table.close();
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - start;
  if (profile) {
    const { profile: p } = await session.post("Profiler.stop");
    await writeFile(profile.replace(".cpuprofile", `-${r}.cpuprofile`), JSON.stringify(p));
  }
  await new Promise((resolve) => setTimeout(resolve, 0)); // the observer reports after the pause
  if (result.filesToDelete.length !== FILES) throw new Error(`deleted ${result.filesToDelete.length} files`);
  rows.push({
    wall,
    cpu: (used.user + used.system) / 1000,
    gc: gcMs - gcBefore,
    open: opened,
    list: store.listMs,
    del: store.deleteMs,
  });
  await rm(root, { recursive: true, force: true });
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const rest = rows.slice(1);
const f = (n: number) => n.toFixed(1);
console.log(
  `first wall ${f(rows[0]!.wall)} cpu ${f(rows[0]!.cpu)} gc ${f(rows[0]!.gc)} | rest median wall ${f(median(rest.map((x) => x.wall)))} cpu ${f(median(rest.map((x) => x.cpu)))} gc ${f(median(rest.map((x) => x.gc)))} | load ${loadavg()[0]!.toFixed(1)}`,
);
console.error(
  `rest median open ${f(median(rest.map((x) => x.open)))} list ${f(median(rest.map((x) => x.list)))} delete ${f(median(rest.map((x) => x.del)))}`,
);
console.log(
  "wall/cpu/gc open/list/delete:",
  rows.map((x) => `${f(x.wall)}/${f(x.cpu)}/${f(x.gc)} ${f(x.open)}/${f(x.list)}/${f(x.del)}`).join("  "),
);
duck.close();
