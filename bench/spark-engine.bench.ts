import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { LocalSparkJobs } from "../functions/runtime/local-spark-jobs.ts";
import { DuckSession } from "../shared/duck/duck-session.ts";
import { startInProcessPlane } from "./in-process-plane.ts";
import { folderSpark, ordersPipeline, sparkDriverPeakMb, writeOrders } from "./spark-bench-support.ts";

/**
 * The Spark engine against DuckDB, one flow over JSON files (auto_loader → SQL cast/filter → streaming
 * table), each batch one update of a fresh pipeline through start-update and the in-process driver
 * (the control-plane steps the state machine runs), tables in a local-folder store:
 *
 * 1. Fixed cost: a batch of each size on each engine (`engine` of the update), the Spark driver warm
 *    (its cold start measured apart): where Spark becomes faster is where `auto` should switch.
 * 2. Memory: the peak RSS of Ebb's process (DuckDB runs in it, its memory limit set as a task
 *    function's would be: EBB_SQL_MEMORY_LIMIT) and of the Spark driver (local mode, its heap set),
 *    at the largest batch run.
 *
 * `EBB_SPARK_PYTHON` and `EBB_SPARK_JARS` (functions/spark/setup.sh) must be set. Sizes: the
 * `EBB_SPARK_BENCH_ROWS` list (default 10000,100000,1000000,3000000).
 */

const ROWS_PER_FILE = 100_000;
const MEMORY_CAP = "1GB";

/** `rows` rows of newline-delimited JSON in files of at most ROWS_PER_FILE. */
const writeLanding = (duck: DuckSession, folder: string, rows: number) =>
  writeOrders(duck, folder, rows, ROWS_PER_FILE);

export async function run(): Promise<void> {
  const python = process.env["EBB_SPARK_PYTHON"];
  const jars = process.env["EBB_SPARK_JARS"];
  if (!python || !jars) {
    console.log("skipped: set EBB_SPARK_PYTHON and EBB_SPARK_JARS (bash functions/spark/setup.sh)");
    return;
  }
  const sizes = (process.env["EBB_SPARK_BENCH_ROWS"] ?? "10000,100000,1000000,3000000")
    .split(",")
    .map(Number);
  // DuckDB capped as a 2 GB task function's would be (half its memory), Spark's heap the same.
  process.env["EBB_SQL_MEMORY_LIMIT"] = MEMORY_CAP;
  const work = await mkdtemp(path.join(tmpdir(), "ebb-spark-bench-"));
  const duck = await DuckSession.open();
  const driver = new LocalSparkJobs({ python, jars, bucket: "unused", driverMemory: "1g" });
  const plane = await startInProcessPlane(work, { spark: (folder) => folderSpark(driver, folder) });
  try {
    const warm = path.join(work, "warm");
    await writeLanding(duck, warm, 1000);
    await plane.update(ordersPipeline("warm_duck", warm, "duckdb"));
    const cold = performance.now();
    await plane.update(ordersPipeline("warm_spark", warm, "spark"));
    console.log(
      `Spark driver cold start + first 1,000-row batch: ${(performance.now() - cold).toFixed(0)} ms`,
    );

    console.log("rows | JSON MB | DuckDB ms | Spark ms | Spark/DuckDB");
    for (const rows of sizes) {
      const landing = path.join(work, `landing-${rows}`);
      const bytes = await writeLanding(duck, landing, rows);
      const timed = async (engine: "duckdb" | "spark") => {
        const start = performance.now();
        const name = `b_${engine}_${rows}`;
        await plane.update(ordersPipeline(name, landing, engine));
        return performance.now() - start;
      };
      const duckMs = await timed("duckdb");
      const sparkMs = await timed("spark");
      console.log(
        `${rows.toLocaleString("en")} | ${(bytes / 1e6).toFixed(0)} | ${duckMs.toFixed(0)} | ${sparkMs.toFixed(0)} | ${(sparkMs / duckMs).toFixed(2)}`,
      );
    }
    const ebbPeak = process.resourceUsage().maxRSS / 1024;
    const sparkPeak = await sparkDriverPeakMb(jars);
    console.log(
      `peak RSS: Ebb's process (DuckDB in it, memory_limit ${MEMORY_CAP}) ${ebbPeak.toFixed(0)} MB; ` +
        `Spark driver (local[2], heap 1g) ${sparkPeak?.toFixed(0) ?? "?"} MB`,
    );
  } finally {
    await driver.close();
    await plane.close();
    duck.close();
    await rm(work, { recursive: true, force: true });
  }
}
