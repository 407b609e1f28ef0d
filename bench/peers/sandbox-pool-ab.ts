import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { setIdleSandboxLimit } from "../../shared/engine/sandbox-pool.ts";
import { ebbPipelineSteps } from "./pipeline-scenario.ts";

/**
 * `tsx bench/peers/sandbox-pool-ab.ts [rows] [rounds]`: the pipeline scenario's 1% increments and
 * idle updates with the sandbox pool off (every sandbox opens and closes an instance of its own) and
 * on, interleaved in one process so that the host's load weighs on both alike; medians printed.
 */
const rows = Number(process.argv[2] ?? "1000000");
const rounds = Number(process.argv[3] ?? "7");
const work = await mkdtemp(path.join(tmpdir(), "ebb-sandbox-pool-ab-"));
const steps = await ebbPipelineSteps(work, rows, "memory");
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
try {
  const load = loadavg()[0]!.toFixed(1);
  await steps.first();
  await steps.increment();
  const times = { off: [] as number[], on: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    for (const mode of i % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const)) {
      await setIdleSandboxLimit(mode === "on" ? 2 : 0);
      await steps.increment(); // unmeasured: with the pool on, it leaves the instances it kept
      times[mode].push(await steps.increment());
    }
  }
  console.log(
    `1% increment of ${rows} rows, median of ${rounds} (load ${load} → ${loadavg()[0]!.toFixed(1)}): ` +
      `pool off ${median(times.off).toFixed(0)} ms, on ${median(times.on).toFixed(0)} ms`,
  );
} finally {
  await steps.close();
  await rm(work, { recursive: true, force: true });
}
