import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { performance } from "node:perf_hooks";
import { fixture, UPDATES, type Compaction } from "./rewind.bench.ts";

/**
 * `[PRE=n] [EBB_TRACE=1] tsx bench/profile-replay.ts [rows] [out.cpuprofile]`: the rewind bench's default
 * fixture (auto-compaction on), rewound to the point after update 9 and replayed, twice (the second
 * replay under the V8 CPU profiler, written to `out` for `bench/peers/profile-summary.ts`), then a full
 * refresh. With EBB_TRACE=1 it prints the second rewind's and replay's calls by kind (DuckDB statements,
 * sandboxes, object-store requests) and their wall-clock spans, which include waits for the main thread.
 * COMPACTION=replayed|off: the bench's other fixtures. PRE=n first runs n rewinds between the points at 50% and 100%, as the bench's first figure does.
 */
const rows = Number(process.argv[2] ?? "1000000");
const out = process.argv[3] ?? "replay.cpuprofile";
const trace = process.env["EBB_TRACE"] ? await import("./peers/trace-spans.ts") : undefined;

const f = await fixture(rows, (process.env["COMPACTION"] ?? "on") as Compaction);
// PRE=n: n rewinds first, alternating between the point at 50% and the last point (as the bench's first figure does).
for (let i = 0; i < Number(process.env["PRE"] ?? "0"); i++)
  await f.h.rewind({ rewind_point_id: f.points[i % 2 === 0 ? UPDATES / 2 - 1 : UPDATES - 1]!.rewindPointId });
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 200 });
for (let round = 0; round < 2; round++) {
  await f.h.rewind({ rewind_point_id: f.points[UPDATES - 1]!.rewindPointId });
  trace?.reset();
  let t = performance.now();
  await f.h.rewind({ rewind_point_id: f.points[UPDATES - 2]!.rewindPointId });
  const rewindMs = performance.now() - t;
  if (round === 1) trace?.dump(3, "rewind");
  if (round === 1) await session.post("Profiler.start");
  trace?.reset();
  t = performance.now();
  await f.h.run();
  const replayMs = performance.now() - t;
  if (round === 1) {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(out, JSON.stringify(profile));
    trace?.dump(1, "replay");
  }
  t = performance.now();
  await f.h.run();
  const idleMs = performance.now() - t;
  console.log(
    `round ${round}: rewind ${rewindMs.toFixed(0)} ms, replay ${replayMs.toFixed(0)} ms, idle ${idleMs.toFixed(0)} ms`,
  );
}
trace?.reset();
const t = performance.now();
await f.h.refresh({ full_refresh: true });
console.log(`full refresh ${(performance.now() - t).toFixed(0)} ms`);
process.exit(0);
