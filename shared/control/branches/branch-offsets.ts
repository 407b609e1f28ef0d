import { tableOffsetSchema } from "../../engine/source-offsets.ts";
import type { SourceOffsets } from "../../store/checkpoints-repository.ts";

/**
 * A stream offset into one of the pipeline's tables, as the branch's log numbers its versions
 * (docs/branches.md "What a branch holds"). The branch's version 0 is the clone of live's version
 * `cloned` (every row up to it), and its later versions are its own; so a reader that had read
 * through live's `cloned` (`nextVersion` `cloned + 1`) reads on from the branch's version 1. A reader
 * behind the point's version would have to read part of the clone, which one commit cannot give: it
 * reads the whole clone again (`nextVersion` 0).
 *
 * `cloned`: by table id, live's version each branch log's version 0 clones. Other offsets (files,
 * Kafka, Kinesis, another pipeline's table) are kept as they are.
 */
export function offsetsOnBranch(offsets: SourceOffsets, cloned: ReadonlyMap<string, number>): SourceOffsets {
  // A flow has one source: its offsets are that source's.
  const table = tableOffsetSchema.safeParse(offsets);
  const version = table.success ? cloned.get(table.data.tableId) : undefined;
  if (!table.success || version === undefined) return offsets;
  const next = table.data.nextVersion - version;
  return next > 0 ? { ...table.data, nextVersion: next } : { ...table.data, nextVersion: 0, rowsRead: 0 };
}

/**
 * The inverse, at a publish, for the tables whose branch log is still its clone (version 0): their
 * RESTORE on live says it restored live's version the branch began from (updates/steps/publish-execution.ts), so a
 * reader that had read the clone (`nextVersion` 1 on the branch) has read through that version on
 * live. A table the branch wrote on publishes with its RESTORE naming the branch's version, which the
 * branch reader's offset already counts in.
 *
 * `atClone`: by table id, live's version each table still at its clone began from.
 */
export function offsetsOnLive(offsets: SourceOffsets, atClone: ReadonlyMap<string, number>): SourceOffsets {
  const table = tableOffsetSchema.safeParse(offsets);
  const version = table.success ? atClone.get(table.data.tableId) : undefined;
  if (!table.success || version === undefined || table.data.nextVersion === 0) return offsets;
  return { ...table.data, nextVersion: table.data.nextVersion + version };
}
