import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RewindHarness } from "../support/rewind/rewind-harness.ts";
import { SparkDriver } from "./spark-driver.ts";

/**
 * Deduplication within the watermark against Spark's own `dropDuplicatesWithinWatermark`: the same
 * JSON files, one per micro-batch on both sides (Spark's maxFilesPerTrigger 1, Ebb's
 * max_files_per_batch 1), with keys repeating across batches and event times out of order within
 * each batch, and both must keep the same rows. A key repeats long after its first row, so an engine
 * that forgets a key when the watermark passes its event time (not its event time plus the delay)
 * keeps rows Spark drops.
 *
 * Small by default for CI; EBB_DEDUP_INTEROP_ROWS and EBB_DEDUP_INTEROP_KEYS set the size (rows are
 * split over EBB_DEDUP_INTEROP_BATCHES files).
 */

const PYTHON = process.env["EBB_INTEROP_PYTHON"] ?? "python3";
const JARS = process.env["EBB_INTEROP_SPARK_JARS"] ?? path.resolve(".ebb/interop-jars");
const ROWS = Number(process.env["EBB_DEDUP_INTEROP_ROWS"] ?? 4_000);
const KEYS = Number(process.env["EBB_DEDUP_INTEROP_KEYS"] ?? 300);
const BATCHES = Number(process.env["EBB_DEDUP_INTEROP_BATCHES"] ?? 8);
const DELAY_MINUTES = 15;
/** Each batch's event times span 20 minutes, starting 10 minutes after the previous batch's. */
const STEP_MINUTES = 10;
const BASE = Date.parse("2026-01-01T12:00:00Z");

interface Row {
  readonly id: number;
  readonly seq: number;
  readonly ts: string;
}

/** A fixed pseudo-random sequence (mulberry32), so every run compares the same input. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Batch b's rows: random keys, event times (whole seconds) in [b·10, b·10 + 20) minutes. The
 * watermark after batch b is at most b·10 + 5 minutes, so no row of a later batch is late on either
 * side (Spark and Ebb place lateness one batch apart).
 */
function batches(): Row[][] {
  const next = random(33);
  const perBatch = Math.ceil(ROWS / BATCHES);
  let seq = 0;
  return Array.from({ length: BATCHES }, (_, b) =>
    Array.from({ length: Math.min(perBatch, ROWS - b * perBatch) }, () => {
      const seconds = b * STEP_MINUTES * 60 + Math.floor(next() * 2 * STEP_MINUTES * 60);
      const ts = new Date(BASE + seconds * 1000).toISOString().replace("T", " ").slice(0, 19);
      return { id: Math.floor(next() * KEYS), seq: seq++, ts };
    }),
  );
}

const jsonLines = (rows: readonly Row[]) => rows.map((row) => JSON.stringify(row)).join("\n") + "\n";

describe("deduplication within the watermark, Ebb and Spark over the same micro-batches", () => {
  let spark: SparkDriver;
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), "ebb-interop-dedup-"));
    spark = await SparkDriver.shared(PYTHON, JARS);
  }, 600_000);
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it("keeps the same rows as Spark's dropDuplicatesWithinWatermark", async () => {
    const files = batches().map((rows, b) => ({ name: `batch-${String(b).padStart(3, "0")}.json`, rows }));

    // Spark reads the files oldest first: their modification times are one second apart, in order.
    const landing = path.join(folder, "landing");
    await mkdir(landing);
    const start = Date.now() / 1000 - files.length;
    for (const [b, file] of files.entries()) {
      const where = path.join(landing, file.name);
      await writeFile(where, jsonLines(file.rows));
      await utimes(where, start + b, start + b);
    }
    const fromSpark = await spark.request<[number][]>({
      op: "dedup_within_watermark",
      name: "dedup_within_watermark",
      path: landing,
      schema: "id BIGINT, seq BIGINT, ts STRING",
      event_time: "ts",
      delay: `${DELAY_MINUTES} minutes`,
      keys: ["id"],
      checkpoint: path.join(folder, "spark-checkpoint"),
      select: ["seq"],
    });

    const h = new RewindHarness();
    await h.deploy({
      name: "dedup interop",
      catalog: "main",
      schema: "dedup",
      datasets: [
        {
          name: "events",
          type: "streaming_table",
          flows: [
            {
              name: "ingest",
              source: {
                type: "auto_loader",
                path: h.landingUri,
                format: "json",
                schema: { id: "BIGINT", seq: "BIGINT", ts: "TIMESTAMP" },
              },
              sql: "SELECT id, seq, ts FROM source",
              options: { max_files_per_batch: 1 },
              watermark: { column: "ts", delay: `${DELAY_MINUTES} minutes` },
              drop_duplicates: { keys: ["id"], within_watermark: true },
            },
          ],
        },
      ],
    });
    for (const file of files) await h.land(file.name, jsonLines(file.rows));
    await h.run();
    const progress = await h.eventsOf("flow_progress");
    const batchEvents = progress.filter((e) => e.origin.batch_id !== undefined);
    expect(batchEvents).toHaveLength(files.length);
    const late = batchEvents.reduce(
      (sum, e) =>
        sum +
        Number(
          (e.details["flow_progress"] as { state_operators?: Record<string, number> }).state_operators?.[
            "num_rows_dropped_by_watermark"
          ] ?? 0,
        ),
      0,
    );

    const ebbKept = (await h.rows("events", "seq")).map((r) => Number(r["seq"]));
    const sparkKept = fromSpark.map(([seq]) => Number(seq)).sort((a, b) => a - b);
    console.log(
      `dedup within the watermark over ${ROWS} rows, ${KEYS} keys, ${files.length} batches: Spark kept ${sparkKept.length}, Ebb kept ${ebbKept.length} (late on Ebb's side: ${late})`,
    );
    expect(late).toBe(0);
    // The counts first: a diff of two long lists takes minutes to print.
    expect(ebbKept.length).toBe(sparkKept.length);
    expect(ebbKept).toEqual(sparkKept);
    // The input repeats keys: a good share of rows are duplicates.
    expect(sparkKept.length).toBeLessThan(ROWS * 0.8);
  });
});
