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
 * The live version a publish's RESTORE of a table names (docs/branches.md "Publish"): always one on
 * live's lineage, the version the branch began from (its log's version 0 clones it). A table empty at
 * the point began before live's first version, which Delta cannot name: its RESTORE names version 0,
 * so a live reader past it is told its upstream was rewound.
 */
export function publishRestoreVersion(table: { readonly sourceVersion: number | null }): number {
  return table.sourceVersion ?? 0;
}

/** A published table as `offsetOnLive` translates readers of it. */
export interface PublishedTable {
  /** The version its publish's RESTORE names (publishRestoreVersion). */
  readonly restoredVersion: number;
  /** The branch log's latest version, which the publish makes live. */
  readonly branchVersion: number;
}

/** A branch reader that has not read its upstream's branch log to the end: its rows have no live version. */
export interface ReaderBehind {
  readonly tableId: string;
  readonly nextVersion: number;
  readonly rowsRead: number;
  readonly branchVersion: number;
}

/**
 * The inverse of `offsetsOnBranch`, at a publish: a branch reader's offset in live's numbering, the
 * one place a branch offset goes back to live. A reader that has read the branch log to its latest
 * version has read what the publish's RESTORE makes live, so it reads on after the version the RESTORE
 * names: the lineage walk (table-stream-plan.ts) jumps from the RESTORE to that version and skips it.
 * A reader of a table the branch never wrote that had not begun (`nextVersion` 0) reads live's lineage
 * to the version the branch began from, which is the clone. Any other reader is behind: the branch's
 * own commits it has not read are one RESTORE on live, which a stream cannot read part of.
 *
 * `published`: by table id. Other offsets (files, Kafka, Kinesis, another pipeline's table) are kept.
 */
export function offsetsOnLive(
  offsets: SourceOffsets,
  published: ReadonlyMap<string, PublishedTable>,
): { readonly offsets: SourceOffsets } | { readonly behind: ReaderBehind } {
  const table = tableOffsetSchema.safeParse(offsets);
  const target = table.success ? published.get(table.data.tableId) : undefined;
  if (!table.success || target === undefined) return { offsets };
  const { nextVersion, rowsRead } = table.data;
  if (nextVersion > target.branchVersion && rowsRead === 0)
    return { offsets: { ...table.data, nextVersion: target.restoredVersion + 1 } };
  if (nextVersion === 0 && rowsRead === 0 && target.branchVersion === 0) return { offsets };
  return {
    behind: { tableId: table.data.tableId, nextVersion, rowsRead, branchVersion: target.branchVersion },
  };
}
