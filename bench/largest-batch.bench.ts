import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { LocalSparkJobs } from "../functions/runtime/local-spark-jobs.ts";
import { DuckSession } from "../shared/duck/duck-session.ts";
import { taskEnvironment } from "../shared/engine/task-sizing.ts";
import { cappedTempFolders, withCappedTempFolder } from "../test/support/capped-temp-folder.ts";
import { startInProcessPlane } from "./in-process-plane.ts";
import { folderSpark, ordersPipeline, sparkDriverPeakMb, writeOrders } from "./spark-bench-support.ts";

/**
 * The largest batch each engine finishes (issue 37): one flow over one JSON file (auto_loader →
 * cast and filter → streaming table), the file doubled until the DuckDB path fails, then the Spark
 * path on ten times the largest file DuckDB finished.
 *
 * Why one file: it is the batch that cannot be split. Ebb's planner splits a backlog of files by
 * bytes and re-plans a batch that did not fit in halves, but a JSON file is its unit (only a Parquet
 * file splits, by row groups): a file larger than the task function can hold fails with
 * BATCH_TOO_LARGE, whatever the bound. It is a real case: a daily export, a first load of a dump.
 * A cast-and-filter flow streams on both engines, so what stops DuckDB is the function's `/tmp` (the
 * batch's input lands there, its output is written there), not its memory.
 *
 * The DuckDB path runs as a task function would, scaled to this machine: its temporary folder a
 * tmpfs of EBB_LARGEST_BATCH_TMP_MB (default 32: Lambda's 10 GB maximum `/tmp` at 1/320), and the
 * environment `taskEnvironment` gives a function of that `/tmp` and twice EBB_LARGEST_BATCH_MEMORY_MB
 * of memory (DuckDB's memory limit is half the function's; default 1024 MB, so a 2 GB function).
 * The Spark path is the local driver (`local[2]`), its JVM heap the same EBB_LARGEST_BATCH_MEMORY_MB.
 * Each batch is one update of a fresh pipeline through start-update and the in-process driver.
 * EBB_LARGEST_BATCH_START_ROWS sets the first file (default 125,000 rows, ~8.5 MB). Mounting the
 * tmpfs needs root. Peak memory: VmHWM of Ebb's process (reset before each engine) and of the
 * Spark driver's JVM.
 */

const TMP_MB = Number(process.env["EBB_LARGEST_BATCH_TMP_MB"] ?? 32);
const MEMORY_MB = Number(process.env["EBB_LARGEST_BATCH_MEMORY_MB"] ?? 1024);
const START_ROWS = Number(process.env["EBB_LARGEST_BATCH_START_ROWS"] ?? 125_000);
/** Doublings before the bench gives up looking for DuckDB's limit (the scale is then too large). */
const MAX_DOUBLINGS = 8;
const SPARK_FACTOR = 10;

/** This process's peak resident set, MB (VmHWM), and how to start measuring it again. */
async function ownPeakMb(): Promise<number> {
  const status = await readFile("/proc/self/status", "utf8");
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
const resetOwnPeak = () => writeFile("/proc/self/clear_refs", "5");

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

export async function run(): Promise<void> {
  const python = process.env["EBB_SPARK_PYTHON"];
  const jars = process.env["EBB_SPARK_JARS"];
  if (!python || !jars) {
    console.log("skipped: set EBB_SPARK_PYTHON and EBB_SPARK_JARS (bash functions/spark/setup.sh)");
    return;
  }
  if (!cappedTempFolders) {
    console.log("skipped: capping the flow's temporary folder mounts a tmpfs, which needs root");
    return;
  }
  const environment = taskEnvironment({
    memoryMb: MEMORY_MB * 2,
    ephemeralStorageMb: TMP_MB,
    timeoutSeconds: 900,
  });
  Object.assign(process.env, environment);
  console.log(
    `scale: the flow's temporary folder ${TMP_MB} MB (Lambda's 10 GB /tmp at 1/${Math.round(10_240 / TMP_MB)}); ` +
      `DuckDB memory_limit ${environment["EBB_SQL_MEMORY_LIMIT"]}, batch bound ${mb(Number(environment["EBB_BATCH_MAX_BYTES"]))} MB; ` +
      `Spark local[2], JVM heap ${MEMORY_MB} MB`,
  );
  const work = await mkdtemp(path.join(tmpdir(), "ebb-largest-batch-"));
  const duck = await DuckSession.open();
  const driver = new LocalSparkJobs({ python, jars, bucket: "unused", driverMemory: `${MEMORY_MB}m` });
  const plane = await startInProcessPlane(work, { spark: (folder) => folderSpark(driver, folder) });
  try {
    console.log("engine | rows | JSON MB | result | s | Ebb peak MB | Spark driver peak MB");
    let largest: { rows: number; bytes: number } | undefined;
    let rows = START_ROWS;
    for (let step = 0; step <= MAX_DOUBLINGS; step++, rows *= 2) {
      const landing = path.join(work, `duck-${rows}`);
      const bytes = await writeOrders(duck, landing, rows, rows);
      await resetOwnPeak();
      const start = performance.now();
      const outcome = await withCappedTempFolder(TMP_MB, () =>
        plane.update(ordersPipeline(`duck_${rows}`, landing, "duckdb")).then(
          () => "finished",
          (error: unknown) => `failed: ${(error as { errorCode?: string }).errorCode ?? String(error)}`,
        ),
      );
      const seconds = (performance.now() - start) / 1000;
      console.log(
        `duckdb | ${rows.toLocaleString("en")} | ${mb(bytes)} | ${outcome} | ${seconds.toFixed(1)} | ${(await ownPeakMb()).toFixed(0)} | -`,
      );
      await rm(landing, { recursive: true, force: true });
      if (outcome !== "finished") break;
      largest = { rows, bytes };
    }
    if (!largest) {
      console.log(`DuckDB finished no batch: lower EBB_LARGEST_BATCH_START_ROWS`);
      return;
    }

    const sparkRows = largest.rows * SPARK_FACTOR;
    const landing = path.join(work, `spark-${sparkRows}`);
    const sparkBytes = await writeOrders(duck, landing, sparkRows, sparkRows);
    // The driver's cold start apart (a 1,000-row file), then the batch.
    const warm = path.join(work, "warm");
    await writeOrders(duck, warm, 1000, 1000);
    await plane.update(ordersPipeline("warm_spark", warm, "spark"));
    await resetOwnPeak();
    const start = performance.now();
    const outcome = await plane.update(ordersPipeline(`spark_${sparkRows}`, landing, "spark")).then(
      () => "finished",
      (error: unknown) => `failed: ${(error as { errorCode?: string }).errorCode ?? String(error)}`,
    );
    const seconds = (performance.now() - start) / 1000;
    const sparkPeak = await sparkDriverPeakMb(jars);
    console.log(
      `spark | ${sparkRows.toLocaleString("en")} | ${mb(sparkBytes)} | ${outcome} | ${seconds.toFixed(1)} | ${(await ownPeakMb()).toFixed(0)} | ${sparkPeak?.toFixed(0) ?? "?"}`,
    );
    console.log(
      `largest batch finished: DuckDB ${largest.rows.toLocaleString("en")} rows (${mb(largest.bytes)} MB); ` +
        `Spark ${outcome === "finished" ? `${sparkRows.toLocaleString("en")} rows (${mb(sparkBytes)} MB): ratio ${SPARK_FACTOR}` : "none of ten times that"}`,
    );
  } finally {
    await driver.close();
    await plane.close();
    duck.close();
    await rm(work, { recursive: true, force: true });
  }
}
