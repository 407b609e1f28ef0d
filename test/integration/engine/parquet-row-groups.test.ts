import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withDuckSession } from "../../../shared/duck/duck-session.ts";
import { quoteLiteral } from "../../../shared/duck/sql-text.ts";
import { CRASH_POINTS, crashOnce, type CrashHook } from "../../../shared/engine/crash-points.ts";
import { InjectedCrashError } from "../../../shared/engine/errors.ts";
import { fileSetOffsetSchema } from "../../../shared/engine/source-offsets.ts";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/**
 * A single input file above the flow's byte bound (issue 34): a Parquet file is read by row groups,
 * several batches over the one file, each range recorded in its checkpoint's offset so every row is
 * read exactly once across crashes and rewinds; a JSON file, which cannot be read in parts, is
 * refused by name before any of it is read.
 */

const ROWS = 100_000;
const ROWS_PER_GROUP = 10_000;
/** Ten row groups of about 370 KB (an md5 string a row barely compresses): three fit a batch. */
const BOUND = "1.1mb";
/** A small file landed after the big one, read after it. */
const SMALL_ROWS = 10;

/** `rows` rows `(id, digest)` from `first`, as Parquet in row groups of ROWS_PER_GROUP. */
async function parquetFile(first: number, rows: number): Promise<Uint8Array> {
  const file = path.join(tmpdir(), `ebb-row-groups-${process.pid}-${first}-${Date.now()}.parquet`);
  await withDuckSession((duck) =>
    duck.run(
      `COPY (SELECT ${first} + i AS id, md5(i::VARCHAR) AS digest FROM range(${rows}) t(i)) ` +
        `TO ${quoteLiteral(file)} (FORMAT parquet, ROW_GROUP_SIZE ${ROWS_PER_GROUP})`,
    ),
  );
  try {
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}

async function pipelineOf(harness: EngineHarness, format: "parquet" | "json"): Promise<ValidatedPipeline> {
  return harness.validate({
    name: "row_groups",
    catalog: "main",
    schema: "row_groups",
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: harness.landingUri, format },
            sql: "SELECT * FROM source",
            options: { max_bytes_per_batch: BOUND },
          },
        ],
      },
    ],
  });
}

async function landBacklog(harness: EngineHarness): Promise<void> {
  await harness.landing.put("a-big.parquet", await parquetFile(0, ROWS));
  await harness.landing.put("b-small.parquet", await parquetFile(ROWS, SMALL_ROWS));
}

async function expectEveryRowOnce(harness: EngineHarness, pipeline: ValidatedPipeline) {
  const ids = (await harness.rows(pipeline, "raw")).map((r) => Number(r["id"]));
  expect(ids.length).toBe(ROWS + SMALL_ROWS);
  expect(new Set(ids).size).toBe(ROWS + SMALL_ROWS);
  expect(ids.reduce((a, b) => Math.max(a, b))).toBe(ROWS + SMALL_ROWS - 1);
}

/** Each committed batch's range of the big file (`from-to/of`), or `file` for a whole one. */
async function committedRanges(harness: EngineHarness): Promise<string[]> {
  const flow = { pipelineId: harness.pipelineId, flowId: "ingest" };
  const ranges: string[] = [];
  for (let seq = (await harness.plane.checkpoints.head(flow)).seq; seq > 0;) {
    const checkpoint = (await harness.plane.checkpoints.get(flow, seq))!;
    const slice = fileSetOffsetSchema.parse(checkpoint.offsets).slice;
    ranges.unshift(slice ? `${slice.from}-${slice.to}/${slice.of}` : "file");
    seq = checkpoint.parent;
  }
  return ranges;
}

describe("a Parquet file larger than the batch bound", () => {
  it("is read by row groups, several batches over the one file, every row exactly once", async () => {
    const harness = new EngineHarness();
    try {
      const pipeline = await pipelineOf(harness, "parquet");
      await landBacklog(harness);
      const run = await harness.run(pipeline);
      expect(run.error).toBeUndefined();
      expect(run.state).toBe("COMPLETED");
      await expectEveryRowOnce(harness, pipeline);
      expect(await committedRanges(harness)).toEqual(["0-3/10", "3-6/10", "6-9/10", "9-10/10", "file"]);
    } finally {
      await harness.close();
    }
  });

  it("re-plans a range that failed for size in halves of its bytes, and keeps the smaller bound", async () => {
    let fails = 1;
    const diskFull: CrashHook = (point) => {
      if (point === "after-data-files" && fails-- > 0)
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    };
    const harness = new EngineHarness({ crash: diskFull });
    try {
      const pipeline = await pipelineOf(harness, "parquet");
      await landBacklog(harness);
      const run = await harness.run(pipeline);
      expect(run.error).toBeUndefined();
      expect(run.state).toBe("COMPLETED");
      await expectEveryRowOnce(harness, pipeline);
      // Three row groups halved by bytes: one a batch from then on.
      expect(await committedRanges(harness)).toEqual([
        ...Array.from({ length: 10 }, (_, g) => `${g}-${g + 1}/10`),
        "file",
      ]);
      const warned = await harness.plane.events.query(
        harness.pipelineId,
        { eventType: "warning", updateId: run.updateId, order: "asc" },
        { limit: 5 },
      );
      expect(warned.items.map((e) => e.message)).toEqual([
        expect.stringMatching(
          /^Flow 'ingest' re-planned batch 1 \(3 row groups of a file, [\d.]+ [KM]B\) as batch 2 \(1 row group of a file, [\d.]+ KB\): /,
        ),
      ]);
    } finally {
      await harness.close();
    }
  });

  // The new step: a batch over part of a file, stopped anywhere (its data uploaded and not committed
  // among them), converges on retry with nothing lost or doubled.
  for (const point of CRASH_POINTS.filter((p) => p !== "after-state-write")) {
    it(`converges after a crash ${point} of its second range`, async () => {
      const crash: CrashHook = crashOnce(point, 2);
      const harness = new EngineHarness({ crash });
      try {
        const pipeline = await pipelineOf(harness, "parquet");
        await landBacklog(harness);
        const crashed = await harness.run(pipeline);
        expect(crashed.error).toBeInstanceOf(InjectedCrashError);
        const recovered = await harness.run(pipeline);
        expect(recovered.error).toBeUndefined();
        expect(recovered.state).toBe("COMPLETED");
        await expectEveryRowOnce(harness, pipeline);
        expect(await committedRanges(harness)).toEqual(["0-3/10", "3-6/10", "6-9/10", "9-10/10", "file"]);
      } finally {
        await harness.close();
      }
    });
  }
});

describe("a JSON file larger than the batch bound", () => {
  it("is refused as BATCH_TOO_LARGE naming the file, its size, the bound and the way out, with nothing read", async () => {
    const harness = new EngineHarness();
    try {
      const pipeline = await pipelineOf(harness, "json");
      // About 1.4 MB of JSON lines.
      await harness.land("big.json", jsonLines(100_000, 50_000));
      const run = await harness.run(pipeline);
      expect(run.state).toBe("FAILED");
      const update = await harness.plane.updates.get(harness.pipelineId, run.updateId);
      expect(update?.error?.errorCode).toBe("BATCH_TOO_LARGE");
      expect(update?.error?.message).toMatch(
        /^flow "ingest" cannot read the file big\.json under s3:\/\/\S+: it is [\d.]+ MB, more than the flow's batch bound of 1\.1 MB, and a JSON file is read whole \(Parquet is read by row groups\)\. Split it into files below 1\.1 MB, or raise the bound: the flow's max_bytes_per_batch, or the task functions' ephemeral storage and memory/,
      );
      expect(await harness.tableVersion(pipeline, "raw")).toBe(-1);
      const head = await harness.plane.checkpoints.head({ pipelineId: harness.pipelineId, flowId: "ingest" });
      expect(head.seq).toBe(0);
    } finally {
      await harness.close();
    }
  });
});
