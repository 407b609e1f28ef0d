import type { Snapshot } from "../read/snapshot.ts";
import { planOptimize, type OptimizePlan } from "../operations/optimize.ts";
import { tableProperties } from "../table/table-properties.ts";
import type { OperationDescription } from "./commit-info.ts";

/**
 * Auto-compaction (Databricks' `delta.autoOptimize.autoCompact`): after a commit that added files to
 * a table with the property on, the partitions holding at least `ebb.autoCompact.minNumFiles` small
 * files of one size tier are compacted by an OPTIMIZE commit of their own. Tiers keep the rewriting
 * of a growing table logarithmic: a compacted file waits for files of its own size. The trigger is
 * pure: it decides from the committed snapshot alone, so the common case (nothing due) costs no
 * request.
 *
 * The files the triggering commit added wait for the next compaction: what a compaction takes was all
 * live before the write, so the replay of a write after a rewind plans the bins its original planned,
 * over the same files, and keeps the output the rewind removed instead of writing it again
 * (`compaction-reuse.ts`); a replay costs the data it replays.
 *
 * A compaction never triggers another, and a RESTORE does not trigger one either: a rewind's
 * RESTORE puts back the files of an earlier version and the next write compacts them if due.
 */
export function dueAutoCompaction(
  snapshot: Snapshot,
  operation: OperationDescription,
  committedKeys: ReadonlySet<string>,
): OptimizePlan | undefined {
  if (operation.operation === "OPTIMIZE" || operation.operation === "RESTORE") return undefined;
  const properties = tableProperties(snapshot.metadata);
  if (!properties.autoCompact || snapshot.files.size < properties.autoCompactMinFiles) return undefined;
  const plan = planOptimize(snapshot, {
    targetFileSizeBytes: properties.targetFileSizeBytes,
    minFilesPerPartition: properties.autoCompactMinFiles,
    sizeTiers: true,
    exclude: committedKeys,
  });
  return plan.bins.length > 0 ? plan : undefined;
}
