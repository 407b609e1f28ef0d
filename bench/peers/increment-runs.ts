import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ebbPipelineSteps } from "./pipeline-scenario.ts";

/**
 * `tsx bench/peers/increment-runs.ts [rows] [n]`: the pipeline scenario's first update, two warm 1%
 * increments, then `n` measured ones; prints `{"wall": [...], "cpu": [...]}` (ms; CPU is the
 * process's, DuckDB's threads included). For an A/B of two commits on a loaded host, run it in a copy
 * of each (`git archive <commit> | tar -x -C <dir>`, node_modules linked) in alternating processes.
 */
const rows = Number(process.argv[2] ?? "1000000");
const n = Number(process.argv[3] ?? "5");
const work = await mkdtemp(path.join(tmpdir(), "ebb-increment-runs-"));
const steps = await ebbPipelineSteps(work, rows, "memory");
try {
  await steps.first();
  for (let i = 0; i < 2; i++) await steps.increment();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < n; i++) {
    const before = process.cpuUsage();
    wall.push(await steps.increment());
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1000);
  }
  console.log(JSON.stringify({ wall, cpu }));
} finally {
  await steps.close();
  await rm(work, { recursive: true, force: true });
}
