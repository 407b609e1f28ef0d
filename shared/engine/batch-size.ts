import { describeBytes } from "../pipeline/byte-size.ts";
/**
 * How much one micro-batch takes of its source, and the bounds a plan keeps within (Spark's
 * `maxFilesPerTrigger`, `maxBytesPerTrigger`, `maxOffsetsPerTrigger`). A batch's size is recorded in
 * its checkpoint when planned, so a batch that failed for size (its function's temporary space,
 * memory or time ran out) can be planned again in halves (micro-batch.ts step 1):
 *
 * 1. A batch of more than one file (or record) is halved: the next plan keeps to half its files and
 *    half its bytes (half its records for an event stream, or for one file of a table, which is read
 *    by row ranges), and the flow keeps that bound for the
 *    batches after it (the `learned` bound its checkpoints carry), so it does not fail again on the
 *    next full-sized batch.
 *    A batch of row groups of one Parquet file (parquet-row-groups.ts) is halved by bytes: the next
 *    plan takes half as many of its bytes' row groups.
 * 2. A batch of one file (or one row group) cannot be halved: it fails with `BATCH_TOO_LARGE`,
 *    naming the file, its bytes and the function size that would read it.
 */

export interface BatchSize {
  /** Source files (auto_loader) or table data files (stream, delta). */
  readonly files?: number;
  /** The bytes of those files as stored. */
  readonly bytes?: number;
  /** Records (an event stream's offsets, a table's rows). */
  readonly records?: number;
  /** Row groups of one Parquet file, when the batch reads part of one (`files` is 1). */
  readonly rowGroups?: number;
}

export interface BatchBound {
  readonly maxFiles?: number;
  readonly maxBytes?: number;
  readonly maxRecords?: number;
}

/** The tighter of each bound. */
export function tighter(a: BatchBound | undefined, b: BatchBound | undefined): BatchBound {
  const min = (x: number | undefined, y: number | undefined) =>
    x === undefined ? y : y === undefined ? x : Math.min(x, y);
  const bound = {
    maxFiles: min(a?.maxFiles, b?.maxFiles),
    maxBytes: min(a?.maxBytes, b?.maxBytes),
    maxRecords: min(a?.maxRecords, b?.maxRecords),
  };
  return Object.fromEntries(Object.entries(bound).filter(([, v]) => v !== undefined)) as BatchBound;
}

/**
 * Whether a planned batch takes more than `bound` allows and a smaller one could be planned: a batch
 * of one file (or one record) is as small as a batch gets.
 */
export function exceeds(size: BatchSize, bound: BatchBound): boolean {
  if (size.rowGroups !== undefined && size.rowGroups > 1)
    return bound.maxBytes !== undefined && size.bytes !== undefined && size.bytes > bound.maxBytes;
  if (size.files !== undefined && size.files > 1) {
    return (
      (bound.maxFiles !== undefined && size.files > bound.maxFiles) ||
      (bound.maxBytes !== undefined && size.bytes !== undefined && size.bytes > bound.maxBytes)
    );
  }
  return (
    size.records !== undefined &&
    size.records > 1 &&
    bound.maxRecords !== undefined &&
    size.records > bound.maxRecords
  );
}

/**
 * The bound half of `size` (step 1): half its files, or of one file (a table's, which is read by row
 * ranges) half its records; undefined when the batch is one file or record (step 2).
 */
export function halved(size: BatchSize): BatchBound | undefined {
  if (size.rowGroups !== undefined) {
    if (size.rowGroups <= 1 || size.bytes === undefined) return undefined;
    return { maxBytes: Math.max(1, Math.floor(size.bytes / 2)) };
  }
  if (size.files !== undefined && size.files > 1) {
    return {
      maxFiles: Math.floor(size.files / 2),
      ...(size.bytes !== undefined ? { maxBytes: Math.max(1, Math.floor(size.bytes / 2)) } : {}),
    };
  }
  if (size.records === undefined || size.records <= 1) return undefined;
  return { maxRecords: Math.floor(size.records / 2) };
}

/**
 * The longest prefix of `items` within `maxBytes`, at least one item: a single item larger than
 * the bound is taken alone (and a batch of it fails as `BATCH_TOO_LARGE` only if it does not fit).
 */
export function fitBytes<T>(items: readonly T[], bytesOf: (item: T) => number, maxBytes: number): T[] {
  const kept: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = bytesOf(item);
    if (kept.length > 0 && bytes + size > maxBytes) break;
    kept.push(item);
    bytes += size;
  }
  return kept;
}

/** `3 files, 265 MB` / `4000 records`, for messages and events. */
export function describeSize(size: BatchSize): string {
  const parts: string[] = [];
  if (size.rowGroups !== undefined)
    parts.push(`${size.rowGroups} row group${size.rowGroups === 1 ? "" : "s"} of a file`);
  else if (size.files !== undefined) parts.push(`${size.files} file${size.files === 1 ? "" : "s"}`);
  if (size.bytes !== undefined) parts.push(describeBytes(size.bytes));
  if (size.files === undefined && size.records !== undefined) parts.push(`${size.records} records`);
  return parts.join(", ") || "unknown size";
}
