import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import path from "node:path";
import { PerformanceObserver, performance } from "node:perf_hooks";
import { DeltaTable, forgetDecodedCheckpoints, loadSnapshot } from "../../shared/delta/index.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";

/**
 * `tsx bench/peers/cold-ops.ts <dir> <op>[,<op>…] [runs]`: peers bench snapshot operations
 * (v10 | v1000 | latest | travel | feed) in a fresh process, `runs` of each in the order given (as
 * `v10,v1000,latest`, the peers bench's own sequence), each run's time printed, the first apart: what
 * a CLI call or a Lambda cold start pays. Wall, CPU (the process's, steadier on a loaded
 * host) and garbage collection pauses, in ms. `dir` holds `long-log` as
 * bench/peers/profile-ops.ts makes it. With `PROFILE_OUT=<file>.cpuprofile` each run is CPU-profiled
 * into `<file>-<run>.cpuprofile`.
 */
const [dir = "/tmp/ebb-profile-ops", op = "latest", runsText = "3"] = process.argv.slice(2);
const store = new LocalObjectStore(path.join(dir, "long-log"));
const duck = await DuckSession.open();
const work: Record<string, () => Promise<unknown>> = {
  v10: () => loadSnapshot(store, { version: 10 }),
  v1000: () => loadSnapshot(store, { version: 1000 }),
  latest: () => loadSnapshot(store),
  travel: () => DeltaTable.scanAt(store, { version: 10 }, { duck }),
  feed: async () => {
    const table = await DeltaTable.open(store, { duck });
    try {
      return await table.changes(901, 1000);
    } finally {
      await table.close();
    }
  },
};
const session = new Session();
const profile = process.env["PROFILE_OUT"];
if (profile) {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
}
// Garbage collection's pauses, apart: at load they grow several times over, the decoding's own work less.
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ["gc"] });
for (const name of op.split(",")) {
  const times: string[] = [];
  for (let r = 0; r < Number(runsText); r++) {
    forgetDecodedCheckpoints();
    const [start, cpu, gcBefore] = [performance.now(), process.cpuUsage(), gcMs];
    await work[name]!();
    const used = process.cpuUsage(cpu);
    const wall = performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 0)); // the observer reports after the pause
    times.push(
      `${wall.toFixed(1)} (cpu ${((used.user + used.system) / 1000).toFixed(1)}, gc ${(gcMs - gcBefore).toFixed(1)})`,
    );
    if (profile) {
      const { profile: p } = await session.post("Profiler.stop");
      await writeFile(profile.replace(".cpuprofile", `-${name}-${r}.cpuprofile`), JSON.stringify(p));
      await session.post("Profiler.start");
    }
  }
  console.log(name, times.join(" "));
}
duck.close();
