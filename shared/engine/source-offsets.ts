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
});
export type FileSetOffset = z.infer<typeof fileSetOffsetSchema>;

export const sourceOffsetSchema = z.discriminatedUnion("kind", [tableOffsetSchema, fileSetOffsetSchema]);
export type SourceOffset = z.infer<typeof sourceOffsetSchema>;

/** The last version whose rows the reader has read, fully or in part (-1 before any). */
export function consumedUpTo(offset: TableOffset): number {
  return offset.rowsRead > 0 ? offset.nextVersion : offset.nextVersion - 1;
}

export function sameOffset(a: SourceOffset | undefined, b: SourceOffset | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
