import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withDuckSession } from "../../../shared/duck/duck-session.ts";
import { quoteLiteral } from "../../../shared/duck/sql-text.ts";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import { cappedTempFolders, withCappedTempFolder } from "../../support/capped-temp-folder.ts";
import { EngineHarness } from "./engine-harness.ts";

/**
 * A backlog five times the temporary folder (issue 34) is ingested by one update in batches within
 * the flow's byte bound, each file read exactly once: a batch takes its input and a footer of the
 * folder, never its output as well, and leaves nothing behind for the next batch (a commit's
 * auto-compaction copies used to stay until the task ended: batch 12 found a 16 MB folder full).
 */

const CAP_MB = 16;
/**
 * Five times the folder in 20 batches: the leak this guards against (a commit's auto-compaction
 * copies kept until the task ended) filled it at batch 12 or 13; 64 files (32 batches) took longer.
 */
const FILES = 40;
/** Rows per file: ~2.6 MB of Parquet (four md5 strings a row barely compress). */
const ROWS_PER_FILE = 10_000;
const BOUND = "6mb";
/**
 * The row bound's backlog: twice the folder is enough to fill it if planning lands the whole listing
 * (the bug), and 13 batches show the landed files go with their batch (64 files took ~40% of the file).
 */
const ROW_BOUND_FILES = 26;

/** Eight distinct md5 strings of the row's id: 256 characters that snappy barely compresses. */
function payload(id: string): string {
  return [..."abcdefgh"].map((salt) => `md5(${id}::VARCHAR || '${salt}')`).join(" || ");
}

/** File `f`'s rows `(id, payload)`, as Parquet, made outside any capped folder. */
async function parquetFile(f: number, rows = ROWS_PER_FILE): Promise<Uint8Array> {
  const file = path.join(tmpdir(), `ebb-backlog-${process.pid}-${f}.parquet`);
  const first = f * rows;
  await withDuckSession((duck) =>
    duck.run(
      `COPY (SELECT ${first} + i AS id, ${payload(`(${first} + i)`)} AS payload FROM range(${rows}) t(i)) ` +
        `TO ${quoteLiteral(file)} (FORMAT parquet)`,
    ),
  );
  try {
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}

describe.skipIf(!cappedTempFolders)("a backlog larger than the temporary folder", () => {
  it("runs to completion in bounded batches, every row exactly once", async () => {
    const harness = new EngineHarness();
    try {
      const pipeline = await ingestPipeline(harness, "backlog", { max_bytes_per_batch: BOUND });
      let backlog = 0;
      for (let f = 0; f < FILES; f++) {
        const bytes = await parquetFile(f);
        backlog += bytes.byteLength;
        await harness.landing.put(`part-${String(f).padStart(3, "0")}.parquet`, bytes);
      }
      expect(backlog).toBeGreaterThan(5 * CAP_MB * 1024 * 1024);

      const run = await withCappedTempFolder(CAP_MB, () => harness.run(pipeline));
      expect(run.error).toBeUndefined();
      expect(run.state).toBe("COMPLETED");
      // Two files (5.2 MB) fit the 6 MB bound: 20 batches, none re-planned.
      expect(run.flows["ingest"]?.batches).toBe(FILES / 2);

      await expectEachIdOnce(harness, pipeline, FILES * ROWS_PER_FILE);
    } finally {
      await harness.close();
    }
  });

  it("a row bound lands only the files its batch takes to count their records, not the whole listing", async () => {
    const harness = new EngineHarness();
    const rows = ROWS_PER_FILE / 2;
    try {
      const pipeline = await ingestPipeline(harness, "row_bound_backlog", { max_rows_per_batch: 2 * rows });
      let backlog = 0;
      for (let f = 0; f < ROW_BOUND_FILES; f++) {
        const bytes = await parquetFile(f, rows);
        backlog += bytes.byteLength;
        await harness.landing.put(`part-${String(f).padStart(3, "0")}.parquet`, bytes);
      }
      expect(backlog).toBeGreaterThan(2 * CAP_MB * 1024 * 1024);

      const run = await withCappedTempFolder(CAP_MB, () => harness.run(pipeline));
      expect(run.error).toBeUndefined();
      expect(run.state).toBe("COMPLETED");
      expect(run.flows["ingest"]?.batches).toBe(ROW_BOUND_FILES / 2);
      await expectEachIdOnce(harness, pipeline, ROW_BOUND_FILES * rows);
    } finally {
      await harness.close();
    }
  });
});

/** One flow `ingest` of the landing folder's Parquet files into `raw`, bounded by `options`. */
function ingestPipeline(harness: EngineHarness, schema: string, options: Record<string, unknown>) {
  return harness.validate({
    name: schema,
    catalog: "main",
    schema,
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: harness.landingUri, format: "parquet" },
            sql: "SELECT * FROM source",
            options,
          },
        ],
      },
    ],
  });
}

async function expectEachIdOnce(
  harness: EngineHarness,
  pipeline: Parameters<EngineHarness["run"]>[0],
  count: number,
): Promise<void> {
  const table = await DeltaTable.open(new DatasetCatalog(pipeline, harness.store).tableStore("raw"));
  try {
    const ids = (await table.scan()).map((row) => Number(row["id"]));
    expect(ids.length).toBe(count);
    expect(new Set(ids).size).toBe(count);
  } finally {
    await table.close();
  }
}
