import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { ebbPipelineSteps } from "./pipeline-scenario.ts";

/**
 * `tsx bench/peers/update-ab.ts <other-tree> [rows] [rounds] [first|increment]`: the pipeline
 * scenario's first update (or, after one first update and two warm ones, its 1% increment) by another checkout of Ebb (A: e.g. `git archive <rev> | tar -x -C <other-tree>`, with a
 * `node_modules` link) and by this one (B), interleaved in one process so that the host's load weighs
 * on both alike; medians of wall-clock and of the process's CPU printed. For a change that has no
 * switch to flip in one tree (sandbox-pool-ab.ts flips one).
 */
const other = process.argv[2];
if (!other)
  throw new Error("usage: tsx bench/peers/update-ab.ts <other-tree> [rows] [rounds] [first|increment]");
const rows = Number(process.argv[3] ?? "1000000");
const rounds = Number(process.argv[4] ?? "7");
const step = process.argv[5] === "increment" ? "increment" : "first";
const { ebbPipelineSteps: otherSteps } = (await import(
  path.resolve(other, "bench/peers/pipeline-scenario.ts")
)) as { ebbPipelineSteps: typeof ebbPipelineSteps };
const work = await mkdtemp(path.join(tmpdir(), "ebb-update-ab-"));
const pipelines = {
  A: await otherSteps(path.join(work, "a"), rows, "memory"),
  B: await ebbPipelineSteps(path.join(work, "b"), rows, "memory"),
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
try {
  const load = loadavg()[0]!.toFixed(1);
  for (const side of ["A", "B"] as const) {
    await pipelines[side].first();
    if (step === "increment") for (let i = 0; i < 2; i++) await pipelines[side].increment();
  }
  const wall = { A: [] as number[], B: [] as number[] };
  const cpu = { A: [] as number[], B: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    for (const side of i % 2 === 0 ? (["A", "B"] as const) : (["B", "A"] as const)) {
      const before = process.cpuUsage();
      wall[side].push(await pipelines[side][step]());
      const used = process.cpuUsage(before);
      cpu[side].push((used.user + used.system) / 1000);
    }
  }
  console.log(
    `${step === "first" ? "first update" : "1% increment"} of ${rows} rows, median of ${rounds} (load ${load} → ${loadavg()[0]!.toFixed(1)}): ` +
      `A ${median(wall.A).toFixed(0)} ms (CPU ${median(cpu.A).toFixed(0)}), ` +
      `B ${median(wall.B).toFixed(0)} ms (CPU ${median(cpu.B).toFixed(0)})`,
  );
} finally {
  await pipelines.A.close();
  await pipelines.B.close();
  await rm(work, { recursive: true, force: true });
}
