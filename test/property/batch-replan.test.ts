import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decidePending } from "../../shared/engine/batch-replan.ts";
import { fitBytes, tighter, type BatchBound, type BatchSize } from "../../shared/engine/batch-size.ts";
import { fitRowGroups, rowGroupBytes, type RowGroup } from "../../shared/engine/parquet-row-groups.ts";
import type { Checkpoint } from "../../shared/store/checkpoints-repository.ts";

/**
 * Re-planning batches that failed for size keeps exactly-once (batch-replan.ts): a reference model of
 * the micro-batch protocol over an auto_loader backlog of Parquet files — HEAD's processed files,
 * the file it has read part of (by row groups) and its learned bound,
 * at most one unfinished batch on top of it, a table that holds each committed batch's txn — driven
 * through the engine's own decisions (`decidePending`, `fitBytes`, `fitRowGroups`, `tighter`) by any sequence of
 * attempts: a batch that commits, one that fails for size before or after its table commit (a full
 * disk, a function timeout), one that crashes before or after its table commit. Every row group of
 * every file lands in the table exactly once; once the failures stop, the flow finishes (it is never
 * stuck on a batch a smaller plan could run), unless a batch of one file or one row group failed for
 * size (BATCH_TOO_LARGE).
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
  /** What the batch reads: `file:rowGroup` for each row group of each of its files. */
  readonly units: readonly string[];
  /** HEAD after its commit: the files it finishes, and the file it leaves part-read. */
  readonly finishes: readonly number[];
  readonly open: { readonly file: number; readonly to: number } | undefined;
}

/**
 * `files[i]` is file i's row groups' bytes. A file of more than one row group larger than the bound
 * is read by ranges of row groups (parquet-row-groups.ts), each range a batch of its own, the file
 * finished with its last range; the next batch reads on from HEAD's range before any other file.
 */
function run(files: readonly (readonly number[])[], options: BatchBound, attempts: readonly Attempt[]) {
  const flow = { pipelineId: "p", flowId: "f" };
  const sizes = files.map((groups) => groups.reduce((a, b) => a + b, 0));
  const groupsOf = (file: number): RowGroup[] => {
    let start = 0;
    return files[file]!.map((bytes) => ({ start, end: (start += bytes), rows: 1 }));
  };
  const unitsOf = (file: number, from: number, to: number) =>
    Array.from({ length: to - from }, (_, g) => `${file}:${from + g}`);
  const processed = new Set<number>();
  let open: { file: number; to: number } | undefined;
  const table: string[][] = [];
  const txns = new Set<number>();
  let learned: BatchBound | undefined;
  let pending: Planned | undefined;
  let seq = 0;
  let tooLarge = false;
  const plan = (bound: BatchBound, newLearned: BatchBound | undefined): Planned | undefined => {
    const maxBytes = bound.maxBytes!;
    const checkpointOf = (size: BatchSize): Checkpoint => ({
      flow,
      seq: (seq += 1),
      parent: 0,
      status: "PLANNED",
      offsets: {},
      plannedAt: 0,
      size: { ...size },
      ...(newLearned ? { learnedBound: { ...newLearned } } : {}),
    });
    const range = (file: number, from: number): Planned | undefined => {
      const groups = groupsOf(file);
      const to = fitRowGroups(groups, from, maxBytes);
      if (from === 0 && to === groups.length) return undefined;
      learned = newLearned;
      const last = to === groups.length;
      return {
        checkpoint: checkpointOf({ files: 1, bytes: rowGroupBytes(groups, from, to), rowGroups: to - from }),
        units: unitsOf(file, from, to),
        finishes: last ? [file] : [],
        open: last ? undefined : { file, to },
      };
    };
    if (open) return range(open.file, open.to);
    const fresh = sizes.map((_, i) => i).filter((i) => !processed.has(i));
    const chosen = fitBytes(fresh.slice(0, bound.maxFiles), (i) => sizes[i]!, maxBytes);
    if (chosen.length === 0) return undefined;
    if (chosen.length === 1 && sizes[chosen[0]!]! > maxBytes) {
      const first = range(chosen[0]!, 0);
      if (first) return first;
    }
    learned = newLearned;
    return {
      checkpoint: checkpointOf({ files: chosen.length, bytes: chosen.reduce((n, i) => n + sizes[i]!, 0) }),
      units: chosen.flatMap((file) => unitsOf(file, 0, files[file]!.length)),
      finishes: chosen,
      open: undefined,
    };
  };
  const commitCheckpoint = (batch: Planned) => {
    for (const file of batch.finishes) processed.add(file);
    open = batch.open;
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
      table.push([...batch.units]);
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
  it("reads every row group of every file exactly once, whatever fails, and finishes once the failures stop", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 5 }), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.record({ maxFiles: fc.integer({ min: 1, max: 50 }), maxBytes: fc.integer({ min: 1, max: 400 }) }),
        fc.array(attempt, { maxLength: 60 }),
        (files, options, attempts) => {
          const { table, processed, tooLarge } = run(files, options, attempts);
          const landed = table.flat();
          expect(new Set(landed).size).toBe(landed.length);
          if (!tooLarge) {
            expect(processed.size).toBe(files.length);
            const every = files.flatMap((groups, f) => groups.map((_, g) => `${f}:${g}`));
            expect([...landed].sort()).toEqual(every.sort());
          }
          // Only a batch of one file or one row group, failing for size, is too large to run.
          if (tooLarge) expect(attempts.some((a) => a === "size")).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
