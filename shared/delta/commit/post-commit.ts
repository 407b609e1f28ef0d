import { withDuckSession, type DuckSession } from "../../duck/duck-session.ts";
import { withScratchFolder, type ScratchFolder } from "../../duck/scratch-folder.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { isCheckpointDue, writeCheckpoint, type LastCheckpoint } from "../log/checkpoint-writer.ts";
import { cleanUpExpiredLogs, type LogCleanupPlan } from "../log/log-cleanup.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { tableProperties } from "../table/table-properties.ts";

/**
 * What follows every commit (delta-rs's `PostCommit`): a checkpoint when the new version is a
 * multiple of `delta.checkpointInterval`, then the cleanup of log entries past
 * `delta.logRetentionDuration` (PROTOCOL.md "Metadata Cleanup": Delta runs it after a checkpoint).
 * The commit already stands, so a failed checkpoint is reported, not thrown: the next one catches up.
 */

/** Where a checkpoint is written from: a DuckDB session and a scratch folder. */
export interface CheckpointSession {
  readonly duck: DuckSession;
  readonly scratch: ScratchFolder;
}

export interface PostCommitResult {
  /** The checkpoint written after this commit, when one was due. */
  readonly checkpoint?: LastCheckpoint;
  /** A due checkpoint that failed; the commit itself stands. */
  readonly checkpointError?: unknown;
  /** Log entries past `delta.logRetentionDuration` removed after the checkpoint. */
  readonly logCleanup?: LogCleanupPlan;
}

/** Checkpoints `snapshot` (the version just committed) when due; `session` is opened briefly when absent. */
export async function postCommit(
  store: ObjectStore,
  snapshot: Snapshot,
  now: number,
  session?: CheckpointSession,
): Promise<PostCommitResult> {
  if (!isCheckpointDue(snapshot)) return {};
  try {
    return session
      ? await checkpointAndCleanUp(store, session, snapshot, now)
      : await withDuckSession((duck) =>
          withScratchFolder((scratch) => checkpointAndCleanUp(store, { duck, scratch }, snapshot, now)),
        );
  } catch (checkpointError) {
    return { checkpointError };
  }
}

/** Writes the checkpoint of `snapshot`, then cleans up expired log entries (as Delta does). */
export async function checkpointAndCleanUp(
  store: ObjectStore,
  session: CheckpointSession,
  snapshot: Snapshot,
  now: number,
): Promise<{ checkpoint: LastCheckpoint; logCleanup?: LogCleanupPlan }> {
  const checkpoint = await writeCheckpoint(store, session.duck, session.scratch, snapshot, now);
  const properties = tableProperties(snapshot.metadata);
  if (!properties.expiredLogCleanup) return { checkpoint };
  return { checkpoint, logCleanup: await cleanUpExpiredLogs(store, now, properties.logRetentionMs) };
}
