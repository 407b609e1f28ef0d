import { describe, expect, it } from "vitest";
import { CRASH_POINTS, type CrashHook, type CrashPoint } from "../../../shared/engine/crash-points.ts";
import { BatchTooLargeError, InjectedCrashError } from "../../../shared/engine/errors.ts";
import type { ValidatedPipeline } from "../../../shared/pipeline/validate-pipeline.ts";
import { EngineHarness, jsonLines } from "./engine-harness.ts";

/**
 * A batch that fails for size (its function's temporary space, memory or time ran out) is planned
 * again in halves, never resumed as it was, and every file is still read exactly once (micro-batch.ts
 * step 1, batch-replan.ts). The failures are injected at the step where the batch's data files are
 * written, where a full temporary folder stops a real one.
 */

const FILES = 8;
const ROWS_PER_FILE = 3;
/** Ids of three digits: every file has the same size. */
const FIRST_ID = 100;

/** A full disk, as Node reports it. */
function diskFull(): Error {
  return Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
}

/** A task that ran past its TimeoutSeconds, as the state machine's Catch names it. */
function taskTimeout(): Error {
  return Object.assign(new Error("States.Timeout"), { name: "States.Timeout" });
}

/**
 * Fails the batches whose seq `fails` names at `after-data-files` (or at `at`), then crashes once at
 * `crash`.
 */
function failing(
  fails: (seq: number) => Error | undefined,
  crash?: { point: CrashPoint; seq: number },
  at: CrashPoint = "after-data-files",
): CrashHook {
  let crashed = false;
  return (point, seq) => {
    if (point === at) {
      const error = fails(seq);
      if (error) throw error;
    }
    if (crash && !crashed && point === crash.point && seq === crash.seq) {
      crashed = true;
      throw new InjectedCrashError(point);
    }
  };
}

async function landedPipeline(harness: EngineHarness, options: Record<string, unknown> = {}) {
  const pipeline = await harness.validate({
    name: "replanning",
    catalog: "main",
    schema: "replan",
    datasets: [
      {
        type: "streaming_table",
        name: "raw",
        flows: [
          {
            name: "ingest",
            source: { type: "auto_loader", path: harness.landingUri, format: "json" },
            sql: "SELECT * FROM source",
            options,
          },
        ],
      },
    ],
  });
  for (let file = 0; file < FILES; file++)
    await harness.land(`f${file}.json`, jsonLines(FIRST_ID + file * ROWS_PER_FILE, ROWS_PER_FILE));
  return pipeline;
}

async function expectEveryRowOnce(harness: EngineHarness, pipeline: ValidatedPipeline) {
  const ids = (await harness.rows(pipeline, "raw")).map((r) => Number(r["id"])).sort((a, b) => a - b);
  expect(ids).toEqual(Array.from({ length: FILES * ROWS_PER_FILE }, (_, i) => FIRST_ID + i));
}

/** The files each committed batch read, HEAD back to the root. */
async function committedBatchFiles(harness: EngineHarness): Promise<number[]> {
  const flow = { pipelineId: harness.pipelineId, flowId: "ingest" };
  const files: number[] = [];
  for (let seq = (await harness.plane.checkpoints.head(flow)).seq; seq > 0;) {
    const checkpoint = (await harness.plane.checkpoints.get(flow, seq))!;
    files.unshift(checkpoint.size?.["files"] ?? -1);
    seq = checkpoint.parent;
  }
  return files;
}

async function warnings(harness: EngineHarness, updateId: string): Promise<string[]> {
  const page = await harness.plane.events.query(
    harness.pipelineId,
    { eventType: "warning", updateId, order: "asc" },
    { limit: 20 },
  );
  return page.items.map((e) => e.message);
}

describe("re-planning a batch that failed for size", () => {
  it("halves a batch whose disk filled, in the same update, and keeps the smaller bound", async () => {
    // Batches 1 (8 files) and 2 (its first half) fill the disk; 3 (2 files) fits.
    const harness = new EngineHarness({ crash: failing((seq) => (seq <= 2 ? diskFull() : undefined)) });
    try {
      const pipeline = await landedPipeline(harness);
      const run = await harness.run(pipeline);
      expect(run.error).toBeUndefined();
      expect(run.state).toBe("COMPLETED");
      await expectEveryRowOnce(harness, pipeline);
      expect(await committedBatchFiles(harness)).toEqual([2, 2, 2, 2]);
      const warned = await warnings(harness, run.updateId);
      expect(warned).toHaveLength(2);
      expect(warned[0]).toMatch(
        /^Flow 'ingest' re-planned batch 1 \(8 files, [\d.]+ [KM]?B\) as batch 2 \(4 files, [\d.]+ [KM]?B\): (ENOSPC: no space left on device|TEMP_SPACE_EXHAUSTED: flow "ingest" ran out of temporary space: the disk of \S+ is full \([^)]*\))$/,
      );
      expect(warned[1]).toMatch(/^Flow 'ingest' re-planned batch 2 \(4 files, .*\) as batch 3 \(2 files, /);
    } finally {
      await harness.close();
    }
  });

  it("fails a one-file batch that still does not fit as BATCH_TOO_LARGE, naming the flow", async () => {
    const harness = new EngineHarness({ crash: failing(() => diskFull()) });
    try {
      const pipeline = await landedPipeline(harness, { max_files_per_batch: 2 });
      const run = await harness.run(pipeline);
      expect(run.state).toBe("FAILED");
      expect(run.error).toBeInstanceOf(BatchTooLargeError);
      const update = await harness.plane.updates.get(harness.pipelineId, run.updateId);
      expect(update?.error?.errorCode).toBe("BATCH_TOO_LARGE");
      expect(update?.error?.message).toMatch(
        /^flow "ingest" cannot run its next batch: batch 2 \(1 file, \d+ B\) failed for size \((ENOSPC: no space left on device, write|TEMP_SPACE_EXHAUSTED: flow "ingest" ran out of temporary space: the disk of \S+ is full \([^)]*\))\) and a batch cannot be smaller; it needs more than its \d+ B, while batches of about 128 MB fit this function: split the file/,
      );
    } finally {
      await harness.close();
    }
  });

  it("fails a task that timed out as FUNCTION_TIMEOUT naming the flow; the next update runs the batch in halves", async () => {
    let timeouts = 1;
    const harness = new EngineHarness({
      crash: failing(() => (timeouts-- > 0 ? taskTimeout() : undefined)),
    });
    try {
      const pipeline = await landedPipeline(harness);
      const timedOut = await harness.run(pipeline);
      expect(timedOut.state).toBe("FAILED");
      const update = await harness.plane.updates.get(harness.pipelineId, timedOut.updateId);
      expect(update?.error?.errorCode).toBe("FUNCTION_TIMEOUT");
      expect(update?.error?.message).toMatch(
        /^flow "ingest" of "raw" ran past its task function's timeout in batch 1 \(8 files, .*\); the next update plans that batch again in halves\. If a batch of one file still does not fit, a task function ran past its timeout: give the task functions a longer taskTimeout/,
      );
      const next = await harness.run(pipeline);
      expect(next.error).toBeUndefined();
      expect(next.state).toBe("COMPLETED");
      await expectEveryRowOnce(harness, pipeline);
      expect(await committedBatchFiles(harness)).toEqual([4, 4]);
      expect(await warnings(harness, next.updateId)).toEqual([
        expect.stringMatching(
          /^Flow 'ingest' re-planned batch 1 \(8 files, .*\) as batch 2 \(4 files, .*\): FUNCTION_TIMEOUT$/,
        ),
      ]);
    } finally {
      await harness.close();
    }
  });

  it("resumes, not re-plans, a batch that timed out after its table commit (exactly once)", async () => {
    let timeouts = 1;
    const timingOut = () => (timeouts-- > 0 ? taskTimeout() : undefined);
    const harness = new EngineHarness({ crash: failing(timingOut, undefined, "after-table-commit") });
    try {
      const pipeline = await landedPipeline(harness);
      const timedOut = await harness.run(pipeline);
      expect(timedOut.state).toBe("FAILED");
      const next = await harness.run(pipeline);
      expect(next.state).toBe("COMPLETED");
      await expectEveryRowOnce(harness, pipeline);
      expect(await committedBatchFiles(harness)).toEqual([8]);
      expect(await warnings(harness, next.updateId)).toEqual([]);
    } finally {
      await harness.close();
    }
  });

  it("re-plans a batch planned before the flow's byte bound was lowered", async () => {
    const harness = new EngineHarness({ crash: failing(() => undefined, { point: "after-plan", seq: 1 }) });
    try {
      const pipeline = await landedPipeline(harness);
      const crashed = await harness.run(pipeline);
      expect(crashed.error).toBeInstanceOf(InjectedCrashError);
      const fileBytes = jsonLines(FIRST_ID, ROWS_PER_FILE).length;
      const lowered = await landedPipeline(harness, { max_bytes_per_batch: fileBytes * 3 });
      const run = await harness.run(lowered);
      expect(run.error).toBeUndefined();
      await expectEveryRowOnce(harness, lowered);
      expect(await committedBatchFiles(harness)).toEqual([3, 3, 2]);
      expect(await warnings(harness, run.updateId)).toEqual([
        expect.stringMatching(
          /^Flow 'ingest' re-planned batch 1 \(8 files, .*\) as batch 2 \(3 files, .*\): it is larger than the flow's batch bound now allows$/,
        ),
      ]);
    } finally {
      await harness.close();
    }
  });

  // The new step is the re-plan: a crash at each step of the re-planned batch converges.
  for (const point of CRASH_POINTS.filter((p) => p !== "after-state-write")) {
    it(`converges after a crash ${point} of a re-planned batch`, async () => {
      const harness = new EngineHarness({
        crash: failing((seq) => (seq === 1 ? diskFull() : undefined), { point, seq: 2 }),
      });
      try {
        const pipeline = await landedPipeline(harness);
        const crashed = await harness.run(pipeline);
        expect(crashed.error).toBeInstanceOf(InjectedCrashError);
        const recovered = await harness.run(pipeline);
        expect(recovered.error).toBeUndefined();
        expect(recovered.state).toBe("COMPLETED");
        await expectEveryRowOnce(harness, pipeline);
      } finally {
        await harness.close();
      }
    });
  }
});
