import { createHash, randomUUID } from "node:crypto";
import type { AddFile, RemoveFile } from "../log/actions.ts";
import { decodeLogPath } from "../log/data-file-paths.ts";
import { statsRecordCount } from "../log/stats-json.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { Snapshot } from "../read/snapshot.ts";
import type { OptimizeBin } from "./optimize.ts";

/**
 * A compaction keeps what an earlier compaction of the same files wrote, instead of writing it again.
 * A rewind's RESTORE puts back the small files an abandoned compaction had replaced and removes that
 * compaction's output; the replay then plans the same bin over the same files (auto-compaction plans
 * from the files live before the write, `auto-compaction.ts`), and its rows are those of the removed
 * output, which is still in the bucket until VACUUM: the replay re-adds it and rewrites nothing.
 *
 * - A bin's output files are named after its digest: the input files' paths in bin order, the table's
 *   schema, partitioning and properties, and the target size (`part-c<digest>-r<run>-<uuid>`). Data
 *   files are never rewritten in place, so the same inputs hold the same rows.
 * - An earlier output is kept only whole: every file of one run, found among the snapshot's
 *   tombstones, whose row counts (from their stats) add up to the inputs' rows, each still in the
 *   bucket, removed less than half the table's `delta.deletedFileRetentionDuration` ago (VACUUM
 *   deletes tombstoned files only after all of it).
 */

const NAME = /(?:^|\/)part-c([0-9a-f]{20})-r([0-9a-f]{8})-[^/]*$/;

/** The digest of what a bin's output holds, and the name prefix of the files a new compaction writes. */
export function binDigest(snapshot: Snapshot, bin: OptimizeBin, targetFileSizeBytes: number): string {
  const { schemaString, partitionColumns, configuration } = snapshot.metadata;
  const inputs = bin.files.map((file) => file.path);
  return createHash("sha256")
    .update(JSON.stringify([schemaString, partitionColumns, configuration, targetFileSizeBytes, inputs]))
    .digest("hex")
    .slice(0, 20);
}

/** The name prefix (after `part-`) of one compaction run's output files for a bin of `digest`. */
export function outputNamePrefix(digest: string): string {
  return `c${digest}-r${randomUUID().slice(0, 8)}`;
}

/**
 * The `add` actions that put back an earlier run's output of the bin of `digest`, or `undefined`
 * when no run's output is whole, recent and still in the bucket.
 */
export async function reusableOutput(
  store: ObjectStore,
  tombstones: ReadonlyMap<string, RemoveFile>,
  bin: OptimizeBin,
  digest: string,
  options: { readonly now: number; readonly retentionMs: number },
): Promise<AddFile[] | undefined> {
  const inputRows = sumRows(bin.files.map((file) => file.stats));
  if (inputRows === undefined) return undefined;
  const runs = new Map<string, RemoveFile[]>();
  for (const [key, remove] of tombstones) {
    const match = NAME.exec(key);
    if (!match || match[1] !== digest) continue;
    runs.set(match[2]!, [...(runs.get(match[2]!) ?? []), remove]);
  }
  for (const removes of runs.values()) {
    const recent = removes.every(
      (remove) => (remove.deletionTimestamp ?? 0) > options.now - options.retentionMs / 2,
    );
    if (!recent || sumRows(removes.map((remove) => remove.stats)) !== inputRows) continue;
    if (removes.some((remove) => remove.deletionVector || remove.size == null || !remove.partitionValues))
      continue;
    const present = await Promise.all(removes.map((remove) => store.head(decodeLogPath(remove.path))));
    if (!present.every((info, i) => info !== undefined && info.size === removes[i]!.size)) continue;
    return removes
      .sort((a, b) => (a.path < b.path ? -1 : 1))
      .map((remove) => ({
        path: remove.path,
        partitionValues: remove.partitionValues!,
        size: remove.size!,
        modificationTime: options.now,
        dataChange: false,
        ...(remove.stats ? { stats: remove.stats } : {}),
      }));
  }
  return undefined;
}

function sumRows(stats: readonly (string | null | undefined)[]): number | undefined {
  let total = 0;
  for (const text of stats) {
    const rows = statsRecordCount(text);
    if (rows === undefined) return undefined;
    total += rows;
  }
  return total;
}
