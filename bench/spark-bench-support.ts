import { mkdir, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { LocalSparkJobs } from "../functions/runtime/local-spark-jobs.ts";
import type { DuckSession } from "../shared/duck/duck-session.ts";
import { quoteLiteral } from "../shared/duck/sql-text.ts";
import type { SparkBatchRequest } from "../shared/engine/spark/spark-batch-contract.ts";
import type { SparkJobs } from "../shared/engine/spark/spark-jobs.ts";

/** What the Spark benchmarks share: their JSON input, the local driver over a folder store, its peak memory. */

/** The columns of the benchmarks' JSON orders, and the flow's cast-and-filter SQL over them. */
export const ORDER_COLUMNS = { id: "BIGINT", amount: "BIGINT", region: "VARCHAR", ts: "VARCHAR" };
export const ORDER_SQL =
  "SELECT id, CAST(amount AS DOUBLE) / 100 AS amount, upper(region) AS region, CAST(ts AS TIMESTAMP) AS ts " +
  "FROM source WHERE amount % 10 <> 0";

/**
 * `rows` orders as newline-delimited JSON in files of at most `rowsPerFile`, written by DuckDB;
 * answers their bytes.
 */
/**
 * The benches' pipeline: JSON orders from `landing` cast and filtered into one streaming table, the
 * whole landing folder one batch however large (past the function's default bound, a quarter of
 * /tmp): on DuckDB what stops it is then the folder itself.
 */
export function ordersPipeline(name: string, landing: string, engine: "duckdb" | "spark") {
  return {
    name,
    catalog: "main",
    schema: name,
    configuration: { "pipelines.engine": engine },
    datasets: [
      {
        type: "streaming_table",
        name: "orders",
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: landing, format: "json", schema: ORDER_COLUMNS },
            options: { max_bytes_per_batch: "100GB", max_files_per_batch: 100_000 },
            sql: ORDER_SQL,
          },
        ],
      },
    ],
  };
}

export async function writeOrders(
  duck: DuckSession,
  folder: string,
  rows: number,
  rowsPerFile: number,
): Promise<number> {
  await mkdir(folder, { recursive: true });
  let bytes = 0;
  for (let first = 0, f = 0; first < rows; first += rowsPerFile, f++) {
    const n = Math.min(rowsPerFile, rows - first);
    const file = path.join(folder, `part-${String(f).padStart(5, "0")}.json`);
    await duck.run(
      `COPY (SELECT ${first} + range AS id, (range * 7) % 1000 AS amount, ` +
        `['eu', 'us', 'apac'][range % 3 + 1] AS region, ` +
        `strftime(TIMESTAMP '2026-01-01' + to_seconds(range), '%Y-%m-%d %H:%M:%S') AS ts ` +
        `FROM range(${n})) TO ${quoteLiteral(file)} (FORMAT json)`,
    );
    bytes += (await readFile(file)).byteLength;
  }
  return bytes;
}

/** The local driver, its bucket URIs as the bench's folder store's files. */
export function folderSpark(driver: LocalSparkJobs, bucketFolder: string): SparkJobs {
  return {
    bucketUri: (key) => `file://${bucketFolder}/${key}`,
    locationUri: (location, key) => driver.locationUri(location, key),
    run: (request: SparkBatchRequest) => driver.run(request),
  };
}

/** The peak resident set of this worktree's Spark driver JVM, MB (VmHWM), if one runs. */
export async function sparkDriverPeakMb(jars: string): Promise<number | undefined> {
  let peak: number | undefined;
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8");
      if (!cmdline.includes("SparkSubmit") || !cmdline.includes(jars)) continue;
      const status = await readFile(`/proc/${pid}/status`, "utf8");
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak ?? 0, kb / 1024);
    } catch {
      // gone meanwhile
    }
  }
  return peak;
}
