import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decidePending } from "../../shared/engine/batch-replan.ts";
import { fitBytes, tighter, type BatchBound, type BatchSize } from "../../shared/engine/batch-size.ts";
import type { Checkpoint } from "../../shared/store/checkpoints-repository.ts";

/**
 * Re-planning batches that failed for size keeps exactly-once (batch-replan.ts): a reference model of
 * the micro-batch protocol over an auto_loader backlog — HEAD's processed files and learned bound,
 * at most one unfinished batch on top of it, a table that holds each committed batch's txn — driven
 * through the engine's own decisions (`decidePending`, `fitBytes`, `tighter`) by any sequence of
 * attempts: a batch that commits, one that fails for size before or after its table commit (a full
 * disk, a function timeout), one that crashes before or after its table commit. Every file lands in
 * the table exactly once; once the failures stop, the flow finishes (it is never stuck on a batch a
 * smaller plan could run), unless a one-file batch failed for size (BATCH_TOO_LARGE).
 */

type Attempt = "ok" | "size" | "size-after-commit" | "crash" | "crash-after-commit";

const attempt: fc.Arbitrary<Attempt> = fc.constantFrom(
  "ok",
  "size",
  "size",
  "size-after-commit",
  "crash",
  "crash-after-commit",
);

interface Planned {
  readonly checkpoint: Checkpoint;
  readonly files: readonly number[];
}

function run(sizes: readonly number[], options: BatchBound, attempts: readonly Attempt[]) {
  const flow = { pipelineId: "p", flowId: "f" };
  const processed = new Set<number>();
  const table: number[][] = [];
  const txns = new Set<number>();
  let learned: BatchBound | undefined;
  let pending: Planned | undefined;
  let seq = 0;
  let tooLarge = false;
  const plan = (bound: BatchBound, newLearned: BatchBound | undefined): Planned | undefined => {
    const fresh = sizes.map((_, i) => i).filter((i) => !processed.has(i));
    const files = fitBytes(fresh.slice(0, bound.maxFiles), (i) => sizes[i]!, bound.maxBytes!);
    if (files.length === 0) return undefined;
    const size: BatchSize = { files: files.length, bytes: files.reduce((n, i) => n + sizes[i]!, 0) };
    seq += 1;
    learned = newLearned;
    const checkpoint: Checkpoint = {
      flow,
      seq,
      parent: 0,
      status: "PLANNED",
      offsets: {},
      plannedAt: 0,
      size: { ...size },
      ...(newLearned ? { learnedBound: { ...newLearned } } : {}),
    };
    return { checkpoint, files };
  };
  const commitCheckpoint = (batch: Planned) => {
    for (const file of batch.files) processed.add(file);
    pending = undefined;
  };

  for (let i = 0; i < 10_000; i++) {
    const what = attempts[i] ?? "ok";
    // Step 1: resume, or re-plan, the batch on top of HEAD.
    const bound = tighter(options, learned);
    let batch = pending;
    if (batch) {
      const decision = decidePending(batch.checkpoint, bound, learned, txns.has(batch.checkpoint.seq));
      if (decision.kind === "too-large") {
        tooLarge = true;
        break;
      }
      if (decision.kind === "replan") batch = plan(decision.bound, decision.learned ?? learned);
    } else {
      batch = plan(bound, learned);
    }
    if (!batch) break;
    pending = batch;
    const inTable = txns.has(batch.checkpoint.seq);
    // Steps 3-4: the table commit, skipped when the table holds the txn.
    if (what === "size" || what === "crash") {
      if (what === "size" && !inTable)
        pending = { ...batch, checkpoint: { ...batch.checkpoint, oversized: "ENOSPC" } };
      continue;
    }
    if (!inTable) {
      table.push([...batch.files]);
      txns.add(batch.checkpoint.seq);
    }
    if (what === "size-after-commit") {
      pending = { ...batch, checkpoint: { ...batch.checkpoint, oversized: "FUNCTION_TIMEOUT" } };
      continue;
    }
    if (what === "crash-after-commit") continue;
    // Step 5: COMMITTED, HEAD moves.
    commitCheckpoint(batch);
  }
  return { table, processed, tooLarge };
}

describe("re-planning batches that failed for size (reference model)", () => {
  it("reads every file exactly once, whatever fails, and finishes once the failures stop", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 40 }),
        fc.record({ maxFiles: fc.integer({ min: 1, max: 50 }), maxBytes: fc.integer({ min: 1, max: 1000 }) }),
        fc.array(attempt, { maxLength: 60 }),
        (sizes, options, attempts) => {
          const { table, processed, tooLarge } = run(sizes, options, attempts);
          const landed = table.flat();
          expect(new Set(landed).size).toBe(landed.length);
          if (!tooLarge) {
            expect(processed.size).toBe(sizes.length);
            expect([...landed].sort((a, b) => a - b)).toEqual(sizes.map((_, i) => i));
          }
          // Only a batch of one file, failing for size, is too large to run.
          if (tooLarge) expect(attempts.some((a) => a === "size")).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
