import { z } from "zod";

/**
 * Where a flow stands in its source, as kept in its checkpoint (architecture.md "Streaming"). Plain
 * JSON, validated when read back, so a checkpoint written by an older engine fails loudly.
 */

/**
 * A `stream` or `delta` source: versions before `nextVersion` are consumed, and so are the first
 * `rowsRead` rows of `nextVersion` (a batch bound split it). Rows of a version are ordered by the
 * order of its `add` actions, then by row within each file. `tableId` is the table's `metaData.id`:
 * a table dropped and recreated has a new one.
 */
export const tableOffsetSchema = z.object({
  kind: z.literal("table"),
  tableId: z.string(),
  nextVersion: z.number().int().nonnegative(),
  rowsRead: z.number().int().nonnegative(),
});
export type TableOffset = z.infer<typeof tableOffsetSchema>;

/**
 * An `auto_loader` source: the set of files already processed, kept in the object store as a
 * snapshot plus the changelogs written since (each lists one batch's files), so a batch writes only
 * its own files' names and never rewrites the whole set.
 */
export const fileSetOffsetSchema = z.object({
  kind: z.literal("files"),
  /** Key of the newest snapshot of the set (all files processed up to it), if any. */
  snapshot: z.string().optional(),
  /** Keys of the changelogs after the snapshot, oldest first; the last is this batch's. */
  changelogs: z.array(z.string()),
  /** Files processed in total (for progress reporting). */
  fileCount: z.number().int().nonnegative(),
  /**
   * The batch read row groups `[from, to)` of the Parquet file `key`, of `of` (a file larger than the
   * batch bound, parquet-row-groups.ts); the file joins the set (its changelog) with its last
   * range. While `to < of` the next batch reads on from `to`, before any other file.
   */
  slice: z
    .object({
      key: z.string(),
      from: z.number().int().nonnegative(),
      to: z.number().int().positive(),
      of: z.number().int().positive(),
    })
    .optional(),
  /** How the source was listed up to this batch (incremental-listing.ts); absent: list in full next. */
  listing: z
    .object({
      /** The greatest key processed: an incremental listing starts after it. */
      after: z.string(),
      /** Incremental listings since the last full one. */
      incremental: z.number().int().nonnegative(),
      /** When the last full listing ran (epoch ms). */
      fullAt: z.number().int().nonnegative(),
      /** Every full listing so far found new keys only after `after` (names arrive in order). */
      ordered: z.boolean(),
      /**
       * The batch that wrote this state. One the batch just before did not write was restored by a
       * rewind (absent: written before Ebb recorded it): the next `auto` listing is full.
       */
      seq: z.number().int().nonnegative().optional(),
    })
    .optional(),
});
export type FileSetOffset = z.infer<typeof fileSetOffsetSchema>;

/** Per topic, per partition (a decimal string): the offset of the next record to read. */
const partitionOffsetsSchema = z.record(z.string(), z.record(z.string(), z.number().int().nonnegative()));

/**
 * A `kafka` source: every record before `next[topic][partition]` is consumed. A partition the
 * previous offset did not hold (the first batch, or one created since) started at
 * `started[topic][partition]`, recorded so a retried batch reads exactly the same records.
 */
export const kafkaOffsetSchema = z.object({
  kind: z.literal("kafka"),
  next: partitionOffsetsSchema,
  started: partitionOffsetsSchema.optional(),
});
export type KafkaOffset = z.infer<typeof kafkaOffsetSchema>;

/**
 * A `kinesis` source, per shard: the sequence number of the last record consumed; before any, `at`
 * (epoch ms) when the flow started at LATEST or AT_TIMESTAMP (LATEST is pinned to the time of the
 * first batch, so records put between two runs are never skipped); neither: from the shard's start.
 * `drained`: the shard is closed and every record of it read, which lets its children be read (a
 * child is never read before its parents).
 */
export const kinesisOffsetSchema = z.object({
  kind: z.literal("kinesis"),
  shards: z.record(
    z.string(),
    z.object({
      after: z.string().optional(),
      at: z.number().int().nonnegative().optional(),
      drained: z.boolean().optional(),
    }),
  ),
});
export type KinesisOffset = z.infer<typeof kinesisOffsetSchema>;

/** Where a flow stands in one source. */
export const singleSourceOffsetSchema = z.discriminatedUnion("kind", [
  tableOffsetSchema,
  fileSetOffsetSchema,
  kafkaOffsetSchema,
  kinesisOffsetSchema,
]);
export type SingleSourceOffset = z.infer<typeof singleSourceOffsetSchema>;

/**
 * A stream-stream join flow: its position in `source` and in the joined stream (a table of this
 * pipeline), moved together by each batch.
 */
export const joinOffsetSchema = z.object({
  kind: z.literal("join"),
  source: singleSourceOffsetSchema,
  joined: tableOffsetSchema,
});
export type JoinOffset = z.infer<typeof joinOffsetSchema>;

export const sourceOffsetSchema = z.discriminatedUnion("kind", [
  tableOffsetSchema,
  fileSetOffsetSchema,
  kafkaOffsetSchema,
  kinesisOffsetSchema,
  joinOffsetSchema,
]);
export type SourceOffset = z.infer<typeof sourceOffsetSchema>;

/** The last version whose rows the reader has read, fully or in part (-1 before any). */
export function consumedUpTo(offset: TableOffset): number {
  return offset.rowsRead > 0 ? offset.nextVersion : offset.nextVersion - 1;
}

export function sameOffset(a: SourceOffset | undefined, b: SourceOffset | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
