import { writeFile } from "node:fs/promises";
import { mkdtemp, rm } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ebbPipelineSteps } from "./pipeline-scenario.ts";
const trace = process.env["EBB_TRACE"] ? await import("./trace-spans.ts") : undefined;

/**
 * `tsx bench/peers/profile-increment.ts [rows] [out.cpuprofile]`: the pipeline scenario's first update, then
 * 1% increments, the last of them under the V8 CPU profiler (written to `out`, for Chrome's DevTools or
 * `bench/peers/profile-summary.ts`). Only the increment is profiled, not the landing or the first update.
 */
const rows = Number(process.argv[2] ?? "1000000");
const out = process.argv[3] ?? "increment.cpuprofile";
const work = await mkdtemp(path.join(tmpdir(), "ebb-profile-increment-"));
const steps = await ebbPipelineSteps(work, rows, "memory");
try {
  await steps.first();
  for (let i = 0; i < 2; i++) console.log(`increment ${i}: ${(await steps.increment()).toFixed(0)} ms`);
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  trace?.reset();
  const start = performance.now();
  const ms = await steps.increment();
  const { profile } = await session.post("Profiler.stop");
  console.log(`profiled increment: ${ms.toFixed(0)} ms (${(performance.now() - start).toFixed(0)} ms)`);
  await writeFile(out, JSON.stringify(profile));
  trace?.dump();
  console.log(`idle: ${(await steps.idle()).toFixed(0)} ms`);
} finally {
  await steps.close();
  await rm(work, { recursive: true, force: true });
}
