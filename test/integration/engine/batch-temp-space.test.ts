import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withDuckSession } from "../../../shared/duck/duck-session.ts";
import { quoteLiteral } from "../../../shared/duck/sql-text.ts";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import { crashOnce } from "../../../shared/engine/crash-points.ts";
import { InjectedCrashError } from "../../../shared/engine/errors.ts";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { listAllKeys } from "../../../shared/object-store/object-store.ts";
import { cappedTempFolders, withCappedTempFolder } from "../../support/capped-temp-folder.ts";
import { slowUploads } from "../../support/slow-uploads.ts";
import { EngineHarness } from "./engine-harness.ts";

/**
 * A batch's room in the temporary folder (issue 34): its data files go up while DuckDB writes them,
 * and DuckDB waits while the uploads lag, so its output takes no room whatever the uploads' speed
 * (the uploads here are slowed to a few MB/s: the bound holds by construction, not by timing); a
 * crash after a file is uploaded leaves an orphan nothing reads; one that does not fit says so by name.
 */

/** Rows of the test file: about 36.6 MB of Parquet (an md5 string per row barely compresses). */
const ROWS = 1_000_000;

/** A Parquet file of `ROWS` rows `(id, digest)`, made outside any capped folder. */
async function parquetFile(): Promise<Uint8Array> {
  const file = path.join(tmpdir(), `ebb-batch-temp-${process.pid}-${Date.now()}.parquet`);
  await withDuckSession((duck) =>
    duck.run(
      `COPY (SELECT i AS id, md5(i::VARCHAR) AS digest FROM range(${ROWS}) t(i)) TO ${quoteLiteral(file)} (FORMAT parquet)`,
    ),
  );
  return readFile(file);
}

async function ingestPipeline(
  harness: EngineHarness,
  properties: Record<string, string> = { "delta.targetFileSize": "2mb" },
): Promise<ValidatedPipeline> {
  return harness.validate({
    name: "roomy",
    catalog: "main",
    schema: "temp_space",
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        properties,
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: harness.landingUri, format: "parquet" },
            sql: "SELECT * FROM source",
          },
        ],
      },
    ],
  });
}

async function openTable(harness: EngineHarness, pipeline: ValidatedPipeline) {
  return DeltaTable.open(new DatasetCatalog(pipeline, harness.store).tableStore("raw"));
}

/** Uploads at 3 MB/s: DuckDB writes the batch's output several times faster (about 36 MB). */
const SLOW_LINK_BYTES_PER_SECOND = 3 * 1024 * 1024;

describe.skipIf(!cappedTempFolders)("a batch's temporary space", () => {
  // 36.6 MB of input in a 60 MB folder: the input and its whole output at once would be 73 MB.
  for (const [files, properties] of [
    ["data files of 2 MB", { "delta.targetFileSize": "2mb" }],
    ["one data file in 8 MiB parts", {}],
  ] as const) {
    it(`a Parquet batch larger than half the temporary folder completes under it while uploads lag (${files})`, async () => {
      const bytes = await parquetFile();
      const harness = new EngineHarness({
        bucket: (store) => slowUploads(store, SLOW_LINK_BYTES_PER_SECOND),
      });
      try {
        const pipeline = await ingestPipeline(harness, properties);
        await harness.landing.put("big.parquet", bytes);
        const run = await withCappedTempFolder(60, () => harness.run(pipeline));
        expect(run.error).toBeUndefined();
        expect(run.state).toBe("COMPLETED");
        const table = await openTable(harness, pipeline);
        try {
          const files = [...table.snapshot.files.values()];
          const stats = files.map(
            (f) =>
              JSON.parse(f.stats!) as {
                numRecords: number;
                minValues: { id: number };
                maxValues: { id: number };
              },
          );
          expect(stats.reduce((sum, s) => sum + s.numRecords, 0)).toBe(ROWS);
          expect(Math.min(...stats.map((s) => s.minValues.id))).toBe(0);
          expect(Math.max(...stats.map((s) => s.maxValues.id))).toBe(ROWS - 1);
          const ids = (await table.scan()).map((row) => Number(row["id"]));
          expect(new Set(ids).size).toBe(ROWS);
        } finally {
          await table.close();
        }
      } finally {
        await harness.close();
      }
    });
  }

  it("a one-file batch that does not fit is BATCH_TOO_LARGE for TEMP_SPACE_EXHAUSTED, naming the flow, the folder and the way out", async () => {
    const bytes = await parquetFile();
    const harness = new EngineHarness();
    try {
      const pipeline = await ingestPipeline(harness);
      await harness.landing.put("big.parquet", bytes);
      const run = await withCappedTempFolder(24, () => harness.run(pipeline));
      expect(run.state).toBe("FAILED");
      // One file cannot be planned smaller: the re-planning (batch-replan.ts) gives up, saying why.
      expect(run.error).toMatchObject({ errorCode: "BATCH_TOO_LARGE" });
      expect((run.error as Error).message).toMatch(
        /^flow "ingest" cannot run its next batch: batch \d+ \(1 file, [\d.]+ \w+\) failed for size \(TEMP_SPACE_EXHAUSTED: flow "ingest" ran out of temporary space: the disk of \S+ebb-capped-\S+ is full \([\d.]+ \w+ free of 24 MB\)\) .*split the file.*temporary space/,
      );
    } finally {
      await harness.close();
    }
  });
});

describe("a batch stopped with a data file uploaded and not committed", () => {
  it("leaves an orphan nothing reads, and the retry converges: every row once", async () => {
    const bytes = await parquetFile();
    const harness = new EngineHarness({ crash: crashOnce("after-a-data-file") });
    try {
      const pipeline = await ingestPipeline(harness);
      await harness.landing.put("big.parquet", bytes);
      const crashed = await harness.run(pipeline);
      expect(crashed.state).toBe("FAILED");
      expect(crashed.error).toBeInstanceOf(InjectedCrashError);
      const tableStore = new DatasetCatalog(pipeline, harness.store).tableStore("raw");
      const orphans = (await listAllKeys(tableStore, "")).filter((o) => o.key.endsWith(".parquet"));
      expect(orphans.length).toBeGreaterThan(0);
      const before = await openTable(harness, pipeline);
      expect(before.snapshot.files.size).toBe(0);
      await before.close();

      const recovered = await harness.run(pipeline);
      expect(recovered.error).toBeUndefined();
      expect(recovered.state).toBe("COMPLETED");
      const table = await openTable(harness, pipeline);
      try {
        const live = new Set([...table.snapshot.files.keys()]);
        for (const orphan of orphans) expect(live.has(orphan.key)).toBe(false);
        const ids = (await table.scan()).map((row) => Number(row["id"]));
        expect(ids.length).toBe(ROWS);
        expect(new Set(ids).size).toBe(ROWS);
      } finally {
        await table.close();
      }
    } finally {
      await harness.close();
    }
  });
});
