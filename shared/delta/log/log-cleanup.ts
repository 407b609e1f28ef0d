import { listAll, type ObjectInfo, type ObjectStore } from "../../object-store/object-store.ts";
import { LOG_DIR, parseLogKey } from "./log-paths.ts";

/**
 * Metadata cleanup (PROTOCOL.md "Metadata Cleanup"): log entries older than
 * `delta.logRetentionDuration` (default 30 days) go, run after a checkpoint as Delta does.
 *
 * 1. Cutoff = now - log retention, judged by each log file's modification time (as Delta does).
 * 2. Find the newest complete checkpoint whose version's commit (or the checkpoint itself, if the
 *    commit is gone) is older than the cutoff: the oldest version that stays readable. Without one,
 *    nothing goes: the protocol requires a checkpoint for the oldest kept version.
 * 3. Delete every commit, checkpoint, checksum and compaction file of an earlier version (also
 *    older than the cutoff). `_last_checkpoint`, that checkpoint and everything after it stay; so
 *    do data files (VACUUM's business).
 */
export interface LogCleanupPlan {
  /** The oldest version still readable afterwards, or `undefined` when nothing is removed. */
  readonly earliestKeptVersion: number | undefined;
  readonly keysToDelete: readonly string[];
}

export function planLogCleanup(
  logObjects: readonly ObjectInfo[],
  now: number,
  logRetentionMs: number,
): LogCleanupPlan {
  const cutoff = now - logRetentionMs;
  const modified = new Map<number, number>();
  const checkpoints = new Map<number, number>();
  for (const object of logObjects) {
    const file = parseLogKey(object.key);
    if (file?.kind === "commit") modified.set(file.version, object.lastModified);
    if (file?.kind === "checkpoint") checkpoints.set(file.version, object.lastModified);
  }
  let keepFrom: number | undefined;
  for (const [version, checkpointModified] of checkpoints) {
    if ((modified.get(version) ?? checkpointModified) > cutoff) continue;
    if (keepFrom === undefined || version > keepFrom) keepFrom = version;
  }
  if (keepFrom === undefined) return { earliestKeptVersion: undefined, keysToDelete: [] };
  const keysToDelete = logObjects
    .filter((object) => {
      const file = parseLogKey(object.key);
      if (!file || file.kind === "last-checkpoint" || object.lastModified > cutoff) return false;
      const lastVersion = file.kind === "compaction" ? file.endVersion : file.version;
      return lastVersion < keepFrom;
    })
    .map((object) => object.key);
  return { earliestKeptVersion: keepFrom, keysToDelete };
}

/**
 * Lists `_delta_log/`, plans and deletes. The listing stops at the first commit newer than the
 * cutoff: keys list in version order (a version's checkpoint just before its commit) and commits
 * are written in version order, so nothing after it can go, and a log of 30 days of commits costs
 * one LIST, not one per 1,000 entries. Were a later commit older (a skewed clock), it would only be
 * kept longer.
 */
export async function cleanUpExpiredLogs(
  store: ObjectStore,
  now: number,
  logRetentionMs: number,
): Promise<LogCleanupPlan> {
  const cutoff = now - logRetentionMs;
  const objects: ObjectInfo[] = [];
  for await (const object of listAll(store, LOG_DIR)) {
    objects.push(object);
    if (parseLogKey(object.key)?.kind === "commit" && object.lastModified > cutoff) break;
  }
  const plan = planLogCleanup(objects, now, logRetentionMs);
  if (plan.keysToDelete.length > 0) await store.deleteMany(plan.keysToDelete);
  return plan;
}
