import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { ebbPipelineSteps } from "./pipeline-scenario.ts";
const trace = process.env["EBB_TRACE"] ? await import("./trace-spans.ts") : undefined;

/**
 * `tsx bench/peers/profile-update.ts [rows] [out-folder]`: the pipeline scenario's first update (after an
 * unprofiled one), a 1% increment (after two) and an update with nothing new, each under the V8 CPU
 * profiler (`first.cpuprofile`, `increment.cpuprofile`, `idle.cpuprofile` in `out-folder`); with
 * `EBB_TRACE=1`, each one's statement spans are printed too. `profile-increment.ts` profiles the increment only.
 */
const rows = Number(process.argv[2] ?? "1000000");
const out = process.argv[3] ?? "update-profiles";
await mkdir(out, { recursive: true });
const work = await mkdtemp(path.join(tmpdir(), "ebb-profile-update-"));
const steps = await ebbPipelineSteps(work, rows, "memory");
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 200 });
async function profiled(name: string, step: () => Promise<number>): Promise<void> {
  await session.post("Profiler.start");
  trace?.reset();
  const ms = await step();
  const { profile } = await session.post("Profiler.stop");
  console.log(`=== ${name}: ${ms.toFixed(0)} ms (load average ${loadavg()[0]!.toFixed(1)})`);
  await writeFile(path.join(out, `${name}.cpuprofile`), JSON.stringify(profile));
  trace?.dump(1);
}
try {
  console.log(`first update, unprofiled: ${(await steps.first()).toFixed(0)} ms`);
  await profiled("first", () => steps.first());
  for (let i = 0; i < 2; i++) console.log(`increment ${i}: ${(await steps.increment()).toFixed(0)} ms`);
  await profiled("increment", () => steps.increment());
  await profiled("idle", () => steps.idle());
} finally {
  await steps.close();
  await rm(work, { recursive: true, force: true });
}
