import { describe, expect, it } from "vitest";
import { decidePending } from "../../../shared/engine/batch-replan.ts";
import { describeSize, exceeds, halved } from "../../../shared/engine/batch-size.ts";
import { sizeFailureReason } from "../../../shared/engine/size-failure.ts";
import { SqlLimitExceededError } from "../../../shared/engine/errors.ts";
import {
  batchBytesFor,
  batchBytesFromEnv,
  DEFAULT_TASK_SIZE,
  taskEnvironment,
  taskSizeIssues,
} from "../../../shared/engine/task-sizing.ts";
import type { Checkpoint } from "../../../shared/store/checkpoints-repository.ts";

const MB = 1024 ** 2;

describe("batch sizes", () => {
  it("halves a batch down to one file, then one record", () => {
    expect(halved({ files: 10, bytes: 530 * MB })).toEqual({ maxFiles: 5, maxBytes: 265 * MB });
    expect(halved({ files: 1, bytes: 530 * MB })).toBeUndefined();
    expect(halved({ files: 1, bytes: 9, records: 1000 })).toEqual({ maxRecords: 500 });
    expect(halved({ records: 3 })).toEqual({ maxRecords: 1 });
    expect(halved({ records: 1 })).toBeUndefined();
  });

  it("finds a planned batch too large for a lowered bound, never a batch of one file", () => {
    expect(exceeds({ files: 10, bytes: 530 * MB }, { maxBytes: 128 * MB })).toBe(true);
    expect(exceeds({ files: 10, bytes: 530 * MB }, { maxFiles: 5 })).toBe(true);
    expect(exceeds({ files: 2, bytes: 100 * MB }, { maxFiles: 5, maxBytes: 128 * MB })).toBe(false);
    expect(exceeds({ files: 1, bytes: 530 * MB }, { maxBytes: MB })).toBe(false);
    expect(describeSize({ files: 10, bytes: 530 * MB })).toBe("10 files, 530 MB");
  });

  it("resumes a batch whose txn the table holds, however it failed", () => {
    const pending = {
      size: { files: 10, bytes: 100 },
      oversized: "FUNCTION_TIMEOUT",
    } as unknown as Checkpoint;
    expect(decidePending(pending, {}, undefined, true)).toEqual({ kind: "resume" });
    expect(decidePending(pending, { maxBytes: 80 }, undefined, false)).toEqual({
      kind: "replan",
      from: { files: 10, bytes: 100 },
      bound: { maxFiles: 5, maxBytes: 50 },
      learned: { maxFiles: 5, maxBytes: 50 },
      reason: "FUNCTION_TIMEOUT",
    });
  });

  it("hands a batch DuckDB failed for size to Spark whole, once: one that failed there is halved", () => {
    const pending = {
      seq: 4,
      size: { files: 10, bytes: 100 },
      oversized: "TEMP_SPACE_EXHAUSTED: disk",
    } as unknown as Checkpoint;
    const whole = { maxFiles: 1000, maxBytes: Number.MAX_SAFE_INTEGER };
    expect(decidePending(pending, { maxBytes: 80 }, { maxBytes: 90 }, false, whole)).toEqual({
      kind: "replan",
      from: { files: 10, bytes: 100 },
      bound: whole,
      reason:
        "it failed for its size on DuckDB (TEMP_SPACE_EXHAUSTED: disk); planned again whole, for the Spark engine (pipelines.engine auto)",
      outgrewDuckDb: "TEMP_SPACE_EXHAUSTED: disk",
    });
    // A one-file batch, which DuckDB would refuse as too large, goes to Spark too.
    const oneFile = { ...pending, size: { files: 1, bytes: 100 } } as Checkpoint;
    expect(decidePending(oneFile, {}, undefined, false, whole)).toMatchObject({
      kind: "replan",
      bound: whole,
    });
    // Already handed over: halved on Spark, still marked, never handed over again.
    const onSpark = { ...pending, outgrewDuckDb: "TEMP_SPACE_EXHAUSTED: disk" } as Checkpoint;
    expect(decidePending(onSpark, whole, undefined, false, whole)).toEqual({
      kind: "replan",
      from: { files: 10, bytes: 100 },
      bound: { maxFiles: 5, maxBytes: 50 },
      learned: { maxFiles: 5, maxBytes: 50 },
      reason: "TEMP_SPACE_EXHAUSTED: disk",
      outgrewDuckDb: "TEMP_SPACE_EXHAUSTED: disk",
    });
    // A batch whose commit landed is finished, whatever the engine.
    expect(decidePending(pending, {}, undefined, true, whole)).toEqual({ kind: "resume" });
  });

  it("knows a failure for size from one that a smaller batch would meet as well", () => {
    const full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    expect(sizeFailureReason(new Error("wrapped", { cause: full }))).toBe(
      "ENOSPC: no space left on device, write",
    );
    const spilled = new SqlLimitExceededError("temp", 'flow "f"', "it spilled more than 256MB");
    expect(sizeFailureReason(spilled)).toMatch(/^SQL_TEMP_SPACE_LIMIT_EXCEEDED: /);
    expect(sizeFailureReason(Object.assign(new Error("disk"), { errorCode: "TEMP_SPACE_EXHAUSTED" }))).toBe(
      "TEMP_SPACE_EXHAUSTED: disk",
    );
    expect(sizeFailureReason(new Error("Binder Error: column x not found"))).toBeUndefined();
  });
});

describe("task sizing", () => {
  it("derives the SQL limits and the batch bound from the function's size", () => {
    expect(taskEnvironment(DEFAULT_TASK_SIZE)).toEqual({
      EBB_SQL_MEMORY_LIMIT: "1024MB",
      EBB_SQL_TEMP_LIMIT: "256MB",
      EBB_SQL_TIMEOUT: "600 seconds",
      EBB_BATCH_MAX_BYTES: String(128 * MB),
    });
    expect(batchBytesFor({ memoryMb: 10_240, ephemeralStorageMb: 10_240, timeoutSeconds: 900 })).toBe(
      1280 * MB,
    );
    expect(batchBytesFromEnv({})).toBe(128 * MB);
    expect(batchBytesFromEnv({ EBB_BATCH_MAX_BYTES: "1g" })).toBe(1024 * MB);
    expect(() => batchBytesFromEnv({ EBB_BATCH_MAX_BYTES: "big" })).toThrow(
      /EBB_BATCH_MAX_BYTES must be a size/,
    );
  });

  it("refuses sizes Lambda does not allow, naming the prop", () => {
    expect(taskSizeIssues({ memoryMb: 20_000, ephemeralStorageMb: 100, timeoutSeconds: 900 })).toEqual([
      "taskMemorySize must be a whole number from 128 to 10240 MB (Lambda's range), not 20000",
      "taskEphemeralStorageSize must be a whole number from 512 to 10240 MB (Lambda's range), not 100",
    ]);
  });
});
