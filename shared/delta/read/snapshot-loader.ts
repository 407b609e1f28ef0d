import type { ObjectStore } from "../../object-store/object-store.ts";
import type { CommitInfo } from "../log/actions.ts";
import { commitTimestamp, findCommitInfo } from "../log/commit-file.ts";
import { decodedCheckpoint } from "./checkpoint-cache.ts";
import { versionAtTimestamp } from "./commit-history.ts";
import { readCommits } from "../log/commit-reader.ts";
import { TableNotFoundError } from "../errors.ts";
import { listLog, readLastCheckpointHint } from "../log/log-listing.ts";
import { applyActions, checkpointTableState, emptyTableState, toSnapshot } from "../log/log-replay.ts";
import {
  latestListedVersion,
  planLogSegment,
  type CommitRef,
  type LogListing,
  type LogSegment,
} from "../log/log-segment.ts";
import { assertReadable } from "../table/reader-features.ts";
import type { Snapshot } from "./snapshot.ts";

export interface LoadSnapshotOptions {
  /** Time travel to this version. */
  readonly version?: number;
  /** Time travel to the latest commit at or before this instant (epoch ms). Ignored with `version`. */
  readonly timestamp?: number;
  /** Where the table is (e.g. `s3://bucket/tables/orders/`), for error messages. */
  readonly location?: string;
  /**
   * Refuse tables whose reader protocol this reader does not implement (default true). A writer that
   * checks writer features itself may turn it off to read the state it is about to replace.
   */
  readonly checkReadable?: boolean;
}

/**
 * The snapshot of the table in `store` (a view rooted at the table folder), at the latest version or
 * at the version / timestamp asked for:
 *
 * 1. resolve a timestamp to the latest commit at or before it (`versionAtTimestamp`);
 * 2. list `_delta_log/` from the `_last_checkpoint` hint when it is usable, else from the start;
 * 3. plan the segment: newest complete checkpoint at or before the version, then the commits after;
 * 4. replay checkpoint actions, then each commit in order (PROTOCOL.md "Action Reconciliation");
 * 5. check the table's reader protocol.
 */
export async function loadSnapshot(store: ObjectStore, options: LoadSnapshotOptions = {}): Promise<Snapshot> {
  return (await loadSnapshotAndHead(store, options)).snapshot;
}

/** `loadSnapshot`, and the listed commit file of the version loaded (absent once cleaned up). */
export async function loadSnapshotAndHead(
  store: ObjectStore,
  options: LoadSnapshotOptions = {},
): Promise<{ snapshot: Snapshot; head: CommitRef | undefined }> {
  const version =
    options.version ??
    (options.timestamp === undefined ? undefined : await versionAtTimestamp(store, options.timestamp));
  const { listing, segment } = await planFromListing(store, version, options.location);
  return replaySegment(store, listing, segment, options);
}

/**
 * Steps 4 and 5 for a segment already planned from `listing`: what `loadSnapshotAndHead` does after
 * listing, for a caller that listed the log's tail itself (snapshot-cache.ts).
 */
export async function replaySegment(
  store: ObjectStore,
  listing: LogListing,
  segment: LogSegment,
  options: Pick<LoadSnapshotOptions, "checkReadable"> = {},
): Promise<{ snapshot: Snapshot; head: CommitRef | undefined }> {
  let state = emptyTableState();
  if (segment.checkpoint) {
    const decoded = await decodedCheckpoint(store, segment.checkpoint);
    state = checkpointTableState(decoded.files);
    applyActions(state, decoded.actions);
    state.checkpointTombstones = decoded.tombstones;
  }
  let last: { commitInfo: CommitInfo | undefined; timestamp: number } | undefined;
  for (const { ref, actions } of await readCommits(store, segment.commits)) {
    applyActions(state, actions);
    if (ref.version === segment.version) {
      const commitInfo = findCommitInfo(actions);
      last = { commitInfo, timestamp: commitTimestamp(commitInfo, ref.lastModified) };
    }
  }
  last ??= await checkpointVersionCommit(store, listing, segment);
  const snapshot = toSnapshot(state, {
    version: segment.version,
    timestamp: last.timestamp,
    ...(last.commitInfo ? { commitInfo: last.commitInfo } : {}),
  });
  if (options.checkReadable ?? true) assertReadable(snapshot.protocol, snapshot.metadata);
  return { snapshot, head: listing.commits.get(segment.version) };
}

/**
 * Lists and plans: from the checkpoint hint when it is usable, else from the start, and never past
 * the version asked for. A plan that fails is redone from a full listing, so that errors name every
 * version that can be read, not just those the shorter listing saw.
 */
async function planFromListing(
  store: ObjectStore,
  version: number | undefined,
  location: string | undefined,
): Promise<{ listing: LogListing; segment: LogSegment }> {
  const partial =
    (await listForVersion(store, version)) ??
    (version === undefined ? undefined : await listLog(store, undefined, version));
  if (partial) {
    try {
      return { listing: partial, segment: planLogSegment(partial, version) };
    } catch {
      // fall through to the full listing
    }
  }
  const listing = await listLog(store);
  if (latestListedVersion(listing) === undefined) throw new TableNotFoundError(location ?? "");
  return { listing, segment: planLogSegment(listing, version) };
}

/**
 * The tail of the log to plan from, or `undefined` to list it all. The `_last_checkpoint` hint lets us list only its tail; it is ignored
 * when missing, unreadable, newer than the version asked for, or pointing at a checkpoint that is not
 * there (a stale hint pointing at an older checkpoint is fine: newer ones show up in the tail).
 */
async function listForVersion(
  store: ObjectStore,
  version: number | undefined,
): Promise<LogListing | undefined> {
  const hint = await readLastCheckpointHint(store);
  if (!hint || (version !== undefined && hint.version > version)) return undefined;
  const tail = await listLog(store, hint.version, version);
  return [...tail.checkpoints.keys()].some((v) => v >= hint.version) ? tail : undefined;
}

/** The commit info and timestamp of a snapshot that ends exactly at its checkpoint. */
async function checkpointVersionCommit(
  store: ObjectStore,
  listing: LogListing,
  segment: LogSegment,
): Promise<{ commitInfo: CommitInfo | undefined; timestamp: number }> {
  const ref = listing.commits.get(segment.version);
  if (ref) {
    const [read] = await readCommits(store, [ref]);
    const commitInfo = findCommitInfo(read!.actions);
    return { commitInfo, timestamp: commitTimestamp(commitInfo, ref.lastModified) };
  }
  // The commit was cleaned up; the checkpoint's own write time is the best record left.
  return { commitInfo: undefined, timestamp: segment.checkpoint?.lastModified ?? 0 };
}
