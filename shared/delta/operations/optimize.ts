import type { Action, AddFile } from "../log/actions.ts";
import { standardRequirements } from "../commit/commit-requirements.ts";
import { recordCount, removeFor } from "../commit/file-actions.ts";
import { layoutOf, type OperationContext, type PreparedCommit } from "../commit/operation-context.ts";
import { fileRelationSql, type FileSource } from "../read/file-relation.ts";
import { partitionConstants, tableColumns } from "../read/scan.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { fileKey } from "../read/table-file-rows.ts";
import { UnsupportedFeatureError } from "../errors.ts";
import { writeDataFiles } from "../write/data-file-writer.ts";
import { snapshotTombstones } from "../log/log-replay.ts";
import { tableProperties } from "../table/table-properties.ts";
import { binDigest, outputNamePrefix, reusableOutput } from "./compaction-reuse.ts";

/**
 * OPTIMIZE (bin-packing compaction, as Delta's `OPTIMIZE` without `ZORDER BY`):
 *
 * 1. Candidates: live files smaller than the target size, grouped by partition (a bin never mixes
 *    partitions), oldest first so rows keep their arrival order within a partition. Auto-compaction
 *    also groups them by size tier (`sizeTiers`), so that a compacted file is not rewritten with
 *    each next handful of small files.
 * 2. Bins: each partition's candidates are packed greedily into bins of at most the target size;
 *    a bin of one file is left alone (rewriting it gains nothing).
 * 3. Each bin's rows are written as new files (or an earlier compaction's files of the same bin, which
 *    a rewind removed, are put back: `compaction-reuse.ts`), and the commit removes the bin's files and adds the
 *    new ones, every action with `dataChange: false` (PROTOCOL.md "Add File and Remove File": the
 *    data did not change), so streaming readers and the change data feed skip the commit.
 * 4. Requirements: the removed files must still be live when the commit lands (a concurrent DELETE,
 *    UPDATE, MERGE or compaction of one of them is a conflict); a concurrent append is rebased over.
 *    Older versions keep their files, so time travel and RESTORE to before the compaction read them
 *    (until VACUUM, which keeps whatever protected versions reference).
 */

export interface OptimizeOptions {
  /** Size of the files compaction writes, and below which a file is a candidate. */
  readonly targetFileSizeBytes: number;
  /** Only groups with at least this many candidates are compacted (auto-compaction's trigger). @default 2 */
  readonly minFilesPerPartition?: number;
  /**
   * Group candidates by size tier as well as partition: tier t holds sizes in [m^t, m^(t+1)) for
   * m = `minFilesPerPartition`. m files of one tier add up to the next, so each byte is rewritten
   * once per tier it climbs (at most log_m(target size) times), not once per compaction as when a
   * compacted file joins every later bin.
   */
  readonly sizeTiers?: boolean;
  /**
   * Keys of live files to leave out (auto-compaction leaves the triggering commit's own files for the
   * next one, so that what it compacts was all live before the write, `auto-compaction.ts`).
   */
  readonly exclude?: ReadonlySet<string>;
}

export interface OptimizeBin {
  readonly partitionValues: Readonly<Record<string, string | null>>;
  readonly files: readonly AddFile[];
}

export interface OptimizePlan {
  readonly version: number;
  readonly targetFileSizeBytes: number;
  readonly bins: readonly OptimizeBin[];
  /** Files considered and left as they are (large enough, or alone in their bin). */
  readonly filesSkipped: number;
}

/** Plans the compaction of `snapshot` (pure): which small files go into which bin. */
export function planOptimize(snapshot: Snapshot, options: OptimizeOptions): OptimizePlan {
  const target = options.targetFileSizeBytes;
  const minFiles = Math.max(2, options.minFilesPerPartition ?? 2);
  // A tier's bin of fewer files would stay in its tier, to be rewritten again with the next ones.
  const minPerBin = options.sizeTiers ? minFiles : 2;
  const byPartition = new Map<string, AddFile[]>();
  for (const [liveKey, file] of snapshot.files) {
    if (file.size >= target || options.exclude?.has(liveKey)) continue;
    const key = JSON.stringify([
      snapshot.metadata.partitionColumns.map((column) => file.partitionValues[column] ?? null),
      options.sizeTiers ? sizeTier(file.size, minFiles) : 0,
    ]);
    const group = byPartition.get(key) ?? [];
    group.push(file);
    byPartition.set(key, group);
  }
  const bins: OptimizeBin[] = [];
  for (const files of byPartition.values()) {
    if (files.length < minFiles) continue;
    files.sort((a, b) => a.modificationTime - b.modificationTime || (a.path < b.path ? -1 : 1));
    let bin: AddFile[] = [];
    let binSize = 0;
    const close = () => {
      if (bin.length >= minPerBin) bins.push({ partitionValues: bin[0]!.partitionValues, files: bin });
      bin = [];
      binSize = 0;
    };
    for (const file of files) {
      if (bin.length > 0 && binSize + file.size > target) close();
      bin.push(file);
      binSize += file.size;
    }
    close();
  }
  const compacted = bins.reduce((sum, b) => sum + b.files.length, 0);
  return {
    version: snapshot.version,
    targetFileSizeBytes: target,
    bins,
    filesSkipped: snapshot.files.size - compacted,
  };
}

/** Writes each bin's rows as new files and assembles the `dataChange: false` commit. */
export async function prepareOptimize(
  context: OperationContext,
  snapshot: Snapshot,
  plan: OptimizePlan,
): Promise<PreparedCommit> {
  const layout = layoutOf(snapshot);
  const { schema, columns } = tableColumns(snapshot);
  const sized = { ...context, targetFileSizeBytes: plan.targetFileSizeBytes };
  const now = context.clock();
  const removed = plan.bins.flatMap((bin) => bin.files);
  const added: AddFile[] = [];
  const tombstones = await snapshotTombstones(snapshot);
  const { deletedFileRetentionMs } = tableProperties(snapshot.metadata);
  for (const bin of plan.bins) {
    const digest = binDigest(snapshot, bin, plan.targetFileSizeBytes);
    const kept = await reusableOutput(context.store, tombstones, bin, digest, {
      now,
      retentionMs: deletedFileRetentionMs,
    });
    if (kept) {
      added.push(...kept);
      continue;
    }
    const sources: FileSource[] = [];
    for (const file of bin.files) {
      if (file.deletionVector) {
        throw new UnsupportedFeatureError("deletionVectors", `data file ${file.path} has a deletion vector`);
      }
      sources.push({
        localPath: await context.files.localPath(fileKey(file)),
        constants: partitionConstants(schema, layout.partitionColumns, file.partitionValues),
      });
    }
    const rowsSql = await fileRelationSql(context.duck, sources, columns);
    added.push(
      ...(await writeDataFiles({ ...sized, fileNamePrefix: outputNamePrefix(digest) }, layout, rowsSql)),
    );
  }
  const actions: Action[] = [
    ...removed.map((file) => ({ remove: { ...removeFor(file, now), dataChange: false } })),
    ...added.map((add) => ({ add: { ...add, dataChange: false } })),
  ];
  const sizes = (files: readonly AddFile[]) => files.map((file) => file.size);
  return {
    actions,
    operation: {
      operation: "OPTIMIZE",
      operationParameters: { predicate: JSON.stringify([]), zOrderBy: JSON.stringify([]) },
      operationMetrics: {
        numRemovedFiles: removed.length,
        numAddedFiles: added.length,
        numRemovedBytes: sum(sizes(removed)),
        numAddedBytes: sum(sizes(added)),
        numOutputRows: sum(added.map(recordCount)),
        numBins: plan.bins.length,
      },
      isBlindAppend: false,
    },
    requirements: standardRequirements({ removedFiles: removed.map(fileKey) }),
  };
}

/** The tier of a file of `size` bytes: t with base^t <= size < base^(t+1). */
function sizeTier(size: number, base: number): number {
  return size < base ? 0 : Math.floor(Math.log(size) / Math.log(base) + 1e-9);
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
