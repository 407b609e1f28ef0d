import type { FlowOptions } from "../pipeline/definition-schema.ts";
import type { Source } from "../pipeline/source-schema.ts";
import type { Checkpoint } from "../store/checkpoints-repository.ts";
import { DEFAULT_MAX_FILES_PER_BATCH } from "./auto-loader-source.ts";
import { exceeds, halved, tighter, type BatchBound, type BatchSize } from "./batch-size.ts";

/**
 * What the micro-batch protocol does with the batch planned on top of HEAD (micro-batch.ts step 1),
 * decided from the checkpoint alone (pure):
 *
 * - committed: the table already holds its txn (a crash after step 4): resume it, whatever its size;
 * - failed for size (`oversized`) on DuckDB where Spark may take it (`pipelines.engine: auto` with
 *   Spark configured: `spark`, the bound the flow's own options set): plan it again whole, for Spark,
 *   once; the batch records why (`outgrewDuckDb`), so it and its halves stay on Spark;
 * - failed for size otherwise: plan it again in halves (batch-size.ts), the halved bound learned
 *   by the batches after it; one that cannot be halved is too large;
 * - larger than the flow's bound now allows (the bound was lowered since it was planned): plan it
 *   again within the bound;
 * - otherwise: resume it as planned.
 *
 * A batch is re-planned only while nothing of it is committed, so its records are read by exactly
 * one committed batch: the re-planned one takes a prefix of what the abandoned one would have.
 */

export type PendingDecision =
  | { readonly kind: "resume" }
  | {
      readonly kind: "replan";
      readonly from: BatchSize;
      readonly bound: BatchBound;
      /** The bound the flow keeps for the batches after it. */
      readonly learned?: BatchBound;
      readonly reason: string;
      /** The new batch runs on Spark: DuckDB failed for its size (the size failure's reason). */
      readonly outgrewDuckDb?: string;
    }
  | { readonly kind: "too-large"; readonly size: BatchSize | undefined; readonly reason: string };

export function decidePending(
  pending: Checkpoint,
  bound: BatchBound,
  learned: BatchBound | undefined,
  committed: boolean,
  spark?: BatchBound,
): PendingDecision {
  if (committed) return { kind: "resume" };
  const size = pending.size as BatchSize | undefined;
  if (pending.oversized !== undefined) {
    const onSpark = pending.outgrewDuckDb;
    if (spark && onSpark === undefined)
      return {
        kind: "replan",
        from: size ?? {},
        bound: spark,
        reason: `it failed for its size on DuckDB (${pending.oversized}); planned again whole, for the Spark engine (pipelines.engine auto)`,
        outgrewDuckDb: pending.oversized,
      };
    const half = size && halved(size);
    if (!half) return { kind: "too-large", size, reason: pending.oversized };
    const kept = tighter(learned, half);
    return {
      kind: "replan",
      from: size,
      bound: tighter(bound, kept),
      learned: kept,
      reason: pending.oversized,
      ...(onSpark !== undefined ? { outgrewDuckDb: onSpark } : {}),
    };
  }
  if (size && exceeds(size, bound))
    return {
      kind: "replan",
      from: size,
      bound,
      reason: "it is larger than the flow's batch bound now allows",
    };
  return { kind: "resume" };
}

/** Whether `pending` may need re-planning: only then is the table's txn looked up. */
export function mayReplan(pending: Checkpoint, bound: BatchBound): boolean {
  const size = pending.size as BatchSize | undefined;
  return pending.oversized !== undefined || (size !== undefined && exceeds(size, bound));
}

/** The bound a flow's options set on its batches (with the defaults its source kind has). */
export function optionBound(source: Source, options: FlowOptions, defaultBytes: number): BatchBound {
  if (source.type === "kafka" || source.type === "kinesis") {
    return options.max_offsets_per_batch !== undefined ? { maxRecords: options.max_offsets_per_batch } : {};
  }
  return {
    maxFiles: options.max_files_per_batch ?? DEFAULT_MAX_FILES_PER_BATCH,
    maxBytes: options.max_bytes_per_batch ?? defaultBytes,
    ...(options.max_rows_per_batch !== undefined && source.type !== "auto_loader"
      ? { maxRecords: options.max_rows_per_batch }
      : {}),
  };
}

/** `options` with `bound` in force (records bound a table's rows or an event stream's offsets). */
export function boundedOptions(source: Source, options: FlowOptions, bound: BatchBound): FlowOptions {
  const eventStream = source.type === "kafka" || source.type === "kinesis";
  return {
    ...options,
    ...(bound.maxFiles !== undefined && !eventStream ? { max_files_per_batch: bound.maxFiles } : {}),
    ...(bound.maxBytes !== undefined && !eventStream ? { max_bytes_per_batch: bound.maxBytes } : {}),
    ...(bound.maxRecords !== undefined
      ? eventStream
        ? { max_offsets_per_batch: bound.maxRecords }
        : { max_rows_per_batch: bound.maxRecords }
      : {}),
  };
}
