import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { withDuckSession } from "../../../shared/duck/duck-session.ts";
import { quoteLiteral } from "../../../shared/duck/sql-text.ts";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { DatasetCatalog } from "../../../shared/engine/dataset-catalog.ts";
import { crashOnce } from "../../../shared/engine/crash-points.ts";
import { InjectedCrashError } from "../../../shared/engine/errors.ts";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { listAllKeys, type ObjectStore } from "../../../shared/object-store/object-store.ts";
import { testS3Client } from "../../support/aws.ts";
import { EngineHarness } from "./engine-harness.ts";

/**
 * A batch stopped at the steps its output streams through (issue 34): after a part of a data file's
 * multipart upload went up, and after a whole data file went up, each before the commit. The retry
 * converges with every row once; the upload cut short is aborted (no object under its key, its parts
 * not kept), and the orphan file no snapshot reads is removed by VACUUM.
 */

/** About 14.6 MB of Parquet: one data file of two 8 MiB parts (the table's default 128 MB target). */
const ROWS = 400_000;

async function parquetFile(): Promise<Uint8Array> {
  const file = path.join(tmpdir(), `ebb-crash-uploads-${process.pid}-${Date.now()}.parquet`);
  await withDuckSession((duck) =>
    duck.run(
      `COPY (SELECT i AS id, md5(i::VARCHAR) AS digest FROM range(${ROWS}) t(i)) TO ${quoteLiteral(file)} (FORMAT parquet)`,
    ),
  );
  try {
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}

async function ingestPipeline(harness: EngineHarness): Promise<ValidatedPipeline> {
  return harness.validate({
    name: "crash_uploads",
    catalog: "main",
    schema: "crash_uploads",
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
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

/** The store, but the first multipart upload of a table's data file dies after its first part. */
function dyingAfterFirstPart(store: ObjectStore, died: { key?: string }): ObjectStore {
  const putParts = store.putParts!.bind(store);
  return {
    get: (key) => store.get(key),
    getRange: (key, range) => store.getRange(key, range),
    put: (key, body) => store.put(key, body),
    putIfAbsent: (key, body) => store.putIfAbsent(key, body),
    putIfMatch: (key, body, etag) => store.putIfMatch(key, body, etag),
    list: (prefix, options) => store.list(prefix, options),
    head: (key) => store.head(key),
    delete: (key) => store.delete(key),
    deleteMany: (keys) => store.deleteMany(keys),
    putParts: (key, parts) =>
      putParts(
        key,
        (async function* () {
          let sent = 0;
          for await (const part of parts) {
            if (sent === 1 && died.key === undefined && key.endsWith(".parquet")) {
              died.key = key;
              throw new InjectedCrashError("after-a-data-file");
            }
            yield part;
            sent += 1;
          }
        })(),
      ),
  };
}

async function expectEveryRowOnce(harness: EngineHarness, pipeline: ValidatedPipeline) {
  const table = await DeltaTable.open(new DatasetCatalog(pipeline, harness.store).tableStore("raw"));
  try {
    const ids = (await table.scan()).map((row) => Number(row["id"]));
    expect(ids.length).toBe(ROWS);
    expect(new Set(ids).size).toBe(ROWS);
  } finally {
    await table.close();
  }
}

describe("a batch stopped before its commit, with its output partly uploaded", () => {
  it("after a part of a multipart upload: the upload is aborted, the retry converges, every row once", async () => {
    const died: { key?: string } = {};
    const harness = new EngineHarness({ bucket: (store) => dyingAfterFirstPart(store, died) });
    const sent = vi.spyOn(testS3Client(), "send");
    try {
      const pipeline = await ingestPipeline(harness);
      await harness.landing.put("big.parquet", await parquetFile());
      const crashed = await harness.run(pipeline);
      expect(crashed.state).toBe("FAILED");
      expect(died.key).toBeDefined();
      const uploads = sent.mock.calls
        .map(([command]) => command as { constructor: { name: string }; input: { Key?: string } })
        .filter((command) => command.input.Key?.endsWith(died.key!));
      expect(uploads.map((command) => command.constructor.name)).toEqual([
        "CreateMultipartUploadCommand",
        "UploadPartCommand",
        "AbortMultipartUploadCommand",
      ]);
      expect(await harness.store.head(died.key!)).toBeUndefined();

      const recovered = await harness.run(pipeline);
      expect(recovered.error).toBeUndefined();
      expect(recovered.state).toBe("COMPLETED");
      await expectEveryRowOnce(harness, pipeline);
    } finally {
      sent.mockRestore();
      await harness.close();
    }
  });

  it("after a whole data file: the retry converges, every row once, and VACUUM removes the orphan", async () => {
    const harness = new EngineHarness({ crash: crashOnce("after-a-data-file") });
    try {
      const pipeline = await ingestPipeline(harness);
      await harness.landing.put("big.parquet", await parquetFile());
      const crashed = await harness.run(pipeline);
      expect(crashed.error).toBeInstanceOf(InjectedCrashError);
      const tableStore = new DatasetCatalog(pipeline, harness.store).tableStore("raw");
      const orphans = (await listAllKeys(tableStore, "")).filter((o) => o.key.endsWith(".parquet"));
      expect(orphans).toHaveLength(1);

      const recovered = await harness.run(pipeline);
      expect(recovered.state).toBe("COMPLETED");
      await expectEveryRowOnce(harness, pipeline);

      const table = await DeltaTable.open(tableStore);
      try {
        const vacuumed = await table.vacuum({ retentionHours: 0, allowShortRetention: true, dryRun: false });
        expect(vacuumed.filesToDelete.map((file) => file.key)).toEqual([orphans[0]!.key]);
      } finally {
        await table.close();
      }
      expect(await tableStore.head(orphans[0]!.key)).toBeUndefined();
      await expectEveryRowOnce(harness, pipeline);
    } finally {
      await harness.close();
    }
  });
});
