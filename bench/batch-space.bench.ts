import { statfs } from "node:fs/promises";
import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startInProcessPlane } from "./in-process-plane.ts";
import { DuckSession } from "../shared/duck/duck-session.ts";
import { quoteLiteral, stringList } from "../shared/duck/sql-text.ts";
import { describeBytes } from "../shared/pipeline/byte-size.ts";
import {
  batchBytesFor,
  DEFAULT_TASK_SIZE,
  taskEnvironment,
  type TaskSize,
} from "../shared/engine/task-sizing.ts";
import { cappedTempFolders, withCappedTempFolder } from "../test/support/capped-temp-folder.ts";

/**
 * A batch's temporary space and memory against its size (issue 34). A backlog of Parquet or JSON
 * files is ingested by one update (auto_loader → streaming table) with the default function's batch
 * bound (EBB_BATCH_MAX_BYTES: 128 MB for 2048 MB of memory and 512 MB of /tmp), its temporary folder a
 * 512 MB tmpfs (as Lambda's default /tmp; root only, else the host's folder). Sampled every 20 ms: the
 * folder's used bytes (peak temporary space) and the process's RSS (peak memory: DuckDB runs in
 * process). DuckDB alone reads the same files and writes one Parquet file, for the throughput ratio.
 *
 * `npm run bench -- batch-space` measures 1M, 5M and 10M rows; EBB_BENCH_ROWS="1,5,10,30" (millions)
 * picks the sizes, EBB_BENCH_TASK="2048,4096" another function (its /tmp and memory in MB: the cap,
 * the bound and the SQL limits follow, as the stack sets them), and EBB_BENCH_ROWS_PER_FILE and
 * EBB_BENCH_FORMATS (below) the files. Tables and landing files live in a local-folder object store
 * outside the cap.
 */

/** Rows a landed file holds; EBB_BENCH_ROWS_PER_FILE=0 lands each backlog as one file (read by row groups). */
const ROWS_PER_FILE = Number(process.env["EBB_BENCH_ROWS_PER_FILE"] ?? 500_000) || Number.MAX_SAFE_INTEGER;
/** EBB_BENCH_FORMATS="parquet" measures one format (a JSON file above the bound is refused). */
const FORMATS = (process.env["EBB_BENCH_FORMATS"] ?? "parquet,json").split(",") as ("parquet" | "json")[];
const TASK = taskSize(process.env["EBB_BENCH_TASK"]);
const TEMP_CAP_MB = TASK.ephemeralStorageMb;
const SAMPLE_MS = 20;
const SELECT = "SELECT * FROM source";

function taskSize(text: string | undefined): TaskSize {
  if (text === undefined) return DEFAULT_TASK_SIZE;
  const [ephemeralStorageMb, memoryMb] = text.split(",").map(Number);
  return { ...DEFAULT_TASK_SIZE, ephemeralStorageMb: ephemeralStorageMb!, memoryMb: memoryMb! };
}

function sizes(): number[] {
  const text = process.env["EBB_BENCH_ROWS"] ?? "1,5,10";
  return text.split(",").map((m) => Math.round(Number(m) * 1_000_000));
}

/** Files of ROWS_PER_FILE rows `(id, digest, amount, region)`, in `format`, written by DuckDB. */
async function writeLanding(duck: DuckSession, folder: string, rows: number, format: "parquet" | "json") {
  await mkdir(folder, { recursive: true });
  for (let first = 0, f = 0; first < rows; first += ROWS_PER_FILE, f++) {
    const file = path.join(folder, `part-${String(f).padStart(5, "0")}.${format}`);
    const count = Math.min(ROWS_PER_FILE, rows - first);
    await duck.run(
      `COPY (SELECT ${first} + range AS id, md5(range::VARCHAR) AS digest, (range * 7) % 1000 AS amount, ` +
        `['eu', 'us', 'apac'][range % 3 + 1] AS region FROM range(${count})) ` +
        `TO ${quoteLiteral(file)} (FORMAT ${format === "json" ? "json" : "parquet"})`,
    );
  }
}

async function folderBytes(folder: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(folder)) bytes += (await stat(path.join(folder, name))).size;
  return bytes;
}

/** Peaks of the temporary folder's used bytes and of RSS while `work` runs. */
async function sampled<T>(folder: string, work: () => Promise<T>) {
  let peakTemp = 0;
  let peakRss = 0;
  const base = await statfs(folder);
  const baseUsed = (base.blocks - base.bfree) * base.bsize;
  const sample = async () => {
    const now = await statfs(folder).catch(() => undefined);
    if (now) peakTemp = Math.max(peakTemp, (now.blocks - now.bfree) * now.bsize - baseUsed);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  };
  const timer = setInterval(() => void sample(), SAMPLE_MS);
  const start = performance.now();
  try {
    const value = await work();
    return { value, ms: performance.now() - start, peakTemp, peakRss };
  } finally {
    clearInterval(timer);
  }
}

export async function run(): Promise<void> {
  const batchBytes = batchBytesFor(TASK);
  Object.assign(process.env, taskEnvironment(TASK));
  const work = await mkdtemp(path.join(tmpdir(), "ebb-batch-space-bench-"));
  const duck = await DuckSession.open();
  const ebbPlane = await startInProcessPlane(work);
  try {
    const ingest = async (name: string, landing: string, format: string) =>
      (
        await ebbPlane.update({
          name,
          catalog: "main",
          schema: name,
          datasets: [
            {
              type: "streaming_table",
              name: "raw",
              flows: [
                { name: "ingest", source: { type: "auto_loader", path: landing, format }, sql: SELECT },
              ],
            },
          ],
        })
      ).flows["ingest"]!;
    const capped = <T>(work: (dir: string) => Promise<T>) =>
      cappedTempFolders ? withCappedTempFolder(TEMP_CAP_MB, work) : work(tmpdir());

    console.log(
      `batch bound ${describeBytes(batchBytes)}; temporary folder ${cappedTempFolders ? `a ${TEMP_CAP_MB} MB tmpfs` : "the host's (not root: no cap)"}`,
    );
    console.log("| rows | format | input | batches | peak temp | peak RSS | Ebb | DuckDB alone | ratio |");
    console.log("|---|---|---|---|---|---|---|---|---|");
    for (const rows of sizes()) {
      for (const format of FORMATS) {
        const landing = path.join(work, `landing-${rows}-${format}`);
        await writeLanding(duck, landing, rows, format);
        const input = await folderBytes(landing);
        const name = `space_${format}_${rows}`;
        const ebb = await capped((dir) => sampled(dir, () => ingest(name, landing, format)));
        const reader = format === "json" ? "read_json" : "read_parquet";
        const files = (await readdir(landing)).map((f) => path.join(landing, f));
        const out = quoteLiteral(path.join(work, `alone-${name}.parquet`));
        const alone = await sampled(work, () =>
          duck.run(`COPY (SELECT * FROM ${reader}(${stringList(files)})) TO ${out} (FORMAT parquet)`),
        );
        if (ebb.value.rowsOut !== rows)
          throw new Error(`${name}: ${ebb.value.rowsOut} rows written of ${rows}`);
        console.log(
          `| ${(rows / 1e6).toFixed(0)}M | ${format} | ${describeBytes(input)} | ${ebb.value.batches} | ` +
            `${describeBytes(ebb.peakTemp)} | ${describeBytes(ebb.peakRss)} | ${(ebb.ms / 1000).toFixed(1)} s | ` +
            `${(alone.ms / 1000).toFixed(1)} s | ${(ebb.ms / alone.ms).toFixed(2)}× |`,
        );
        await rm(landing, { recursive: true, force: true });
        await rm(path.join(work, `alone-${name}.parquet`), { force: true });
      }
    }
  } finally {
    await ebbPlane.close();
    duck.close();
    await rm(work, { recursive: true, force: true });
  }
}
