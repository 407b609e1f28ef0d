import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { performance } from "node:perf_hooks";
import { DuckSession } from "../shared/duck/duck-session.ts";
import { Sandbox } from "../shared/engine/sandbox.ts";
import { MemoryObjectStore } from "../shared/object-store/memory-object-store.ts";
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
const trace = process.env["EBB_TRACE"];
const spans: { start: number; ms: number; what: string }[] = [];
const calls = new Map<string, number>();
let origin = 0;
type Method = (...args: unknown[]) => Promise<unknown>;
function wrap(owner: object, name: string, label: (args: unknown[]) => string): void {
  const methods = owner as Record<string, Method | undefined>;
  const original = methods[name];
  if (!original) return;
  methods[name] = async function (this: unknown, ...args: unknown[]) {
    const start = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      const what = label(args);
      const kind = what.split(" ")[0]!;
      calls.set(kind, (calls.get(kind) ?? 0) + 1);
      spans.push({ start: start - origin, ms: performance.now() - start, what });
    }
  };
}
const sql = (args: unknown[]) => String(args[0]).replace(/\s+/g, " ").slice(0, 160);
if (trace) {
  wrap(DuckSession.prototype, "run", (a) => `duck.run ${sql(a)}`);
  wrap(DuckSession.prototype, "rows", (a) => `duck.rows ${sql(a)}`);
  wrap(Sandbox, "open", () => "Sandbox.open");
  wrap(Sandbox.prototype, "close", () => "Sandbox.close");
  for (const name of [
    "get",
    "getRange",
    "put",
    "putIfAbsent",
    "putIfMatch",
    "list",
    "head",
    "delete",
    "deleteMany",
    "copy",
  ])
    wrap(MemoryObjectStore.prototype, name, (a) => `store.${name} ${String(a[0]).slice(-100)}`);
}
function reset() {
  spans.length = 0;
  calls.clear();
  origin = performance.now();
}
function dump(label: string, min: number) {
  console.log(`--- ${label}: calls ${JSON.stringify(Object.fromEntries(calls))}`);
  for (const s of spans.sort((a, b) => a.start - b.start))
    if (s.ms >= min || s.what.startsWith("Sandbox"))
      console.log(`${s.start.toFixed(0).padStart(6)} +${s.ms.toFixed(1).padStart(7)}  ${s.what}`);
}

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
  reset();
  let t = performance.now();
  await f.h.rewind({ rewind_point_id: f.points[UPDATES - 2]!.rewindPointId });
  const rewindMs = performance.now() - t;
  if (round === 1) dump("rewind", 3);
  if (round === 1) await session.post("Profiler.start");
  reset();
  t = performance.now();
  await f.h.run();
  const replayMs = performance.now() - t;
  if (round === 1) {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(out, JSON.stringify(profile));
    dump("replay", 1);
  }
  t = performance.now();
  await f.h.run();
  const idleMs = performance.now() - t;
  console.log(
    `round ${round}: rewind ${rewindMs.toFixed(0)} ms, replay ${replayMs.toFixed(0)} ms, idle ${idleMs.toFixed(0)} ms`,
  );
}
reset();
const t = performance.now();
await f.h.refresh({ full_refresh: true });
console.log(`full refresh ${(performance.now() - t).toFixed(0)} ms`);
process.exit(0);
