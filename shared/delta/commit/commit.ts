import type { Action } from "../log/actions.ts";
import { encodeCommit } from "../log/commit-encoding.ts";
import { findCommitInfo, parseCommitFile } from "../log/commit-file.ts";
import { buildCommitInfo, nextCommitTimestamp, type OperationDescription } from "./commit-info.ts";
import { findConflict, type CommitRequirement } from "./commit-requirements.ts";
import { CommitConflictError, CommitRetriesExhaustedError, TableAlreadyExistsError } from "../errors.ts";
import { assertWritableColumnNames } from "../table/column-names.ts";
import { parseSchema } from "../table/schema.ts";
import { commitKey, LOG_DIR } from "../log/log-paths.ts";
import { applyActions, toSnapshot, type TableState } from "../log/log-replay.ts";
import { tableProperties } from "../table/table-properties.ts";
import { tableStateOf } from "../read/snapshot-refresh.ts";
import type { Snapshot } from "../read/snapshot.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";

/**
 * Committing a version (PROTOCOL.md "Delta Log Entries"; "Creation of New Log Entries": never
 * overwrite an entry, use the store's atomic primitive).
 *
 * 1. The commit targets `readVersion + 1` and starts with `commitInfo` (first action, as In-Commit
 *    Timestamps require) stamped `max(now, previous commit + 1 ms, floor)`, as its
 *    `inCommitTimestamp` too when the table records them.
 * 2. `putIfAbsent(_delta_log/<version>.json)`: `created` means the version is ours.
 * 3. `exists` means another writer took that version: read its actions and check this commit's
 *    requirements against them (a pure function). A broken requirement ends the attempt with a
 *    `conflict` result carrying the winning version and evidence; otherwise fold the winner into
 *    the state, re-stamp the timestamp after it, and go to 2 with the next version.
 *    Creating a table (no read snapshot) never rebases: version 0 taken means the table exists.
 * 4. The result is the new version and its snapshot (read state + winners + this commit), so the
 *    post-commit step can checkpoint without re-reading the log.
 *
 * Expected races are values (`committed | conflict`); only states no retry fixes are thrown.
 * Writers do not call this directly: `transaction.ts` wraps it with the txn check and post-commit.
 */

export interface CommitRequest {
  /** The snapshot the operation planned against; `undefined` when creating the table (version 0). */
  readonly readSnapshot: Snapshot | undefined;
  /** The commit's actions, without `commitInfo` (added here). */
  readonly actions: readonly Action[];
  readonly operation: OperationDescription;
  readonly requirements: readonly CommitRequirement[];
  /** Lowest acceptable commit timestamp (e.g. newest upstream commit consumed + 1 ms). */
  readonly timestampFloor?: number;
}

export interface CommitOptions {
  readonly clock: () => number;
  /** Attempts before giving up on a contended table. Default 100. */
  readonly maxAttempts?: number;
}

export interface CommittedVersion {
  readonly status: "committed";
  readonly version: number;
  readonly timestamp: number;
  /** The table state at `version`. */
  readonly snapshot: Snapshot;
  /** Versions committed by others between the read and this commit. */
  readonly rebasedOver: readonly number[];
}

/** A concurrent commit broke one of this commit's requirements: nothing of it is in the log. */
export interface CommitConflict {
  readonly status: "conflict";
  readonly error: CommitConflictError;
}

export type CommitResult = CommittedVersion | CommitConflict;

/** The result of one attempt to write a version: ours, or someone else's actions. */
export type CommitAttempt =
  | { readonly outcome: "committed" }
  | { readonly outcome: "version-taken"; readonly winner: readonly Action[] };

const DEFAULT_MAX_ATTEMPTS = 100;

/** Writes `request` as the next version, rebasing over non-conflicting concurrent commits. */
export async function commit(
  store: ObjectStore,
  request: CommitRequest,
  options: CommitOptions,
): Promise<CommitResult> {
  for (const action of request.actions)
    if ("metaData" in action) assertWritableColumnNames(parseSchema(action.metaData.schemaString).fields);
  const read = request.readSnapshot;
  // A draft snapshot (version -1, see `draftSnapshot`) plans the table's creation.
  const creating = read === undefined || read.version < 0;
  const readVersion = creating ? undefined : read.version;
  const state = tableStateOf(read);
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  let version = (readVersion ?? -1) + 1;
  let previousTimestamp = creating ? undefined : read.timestamp;
  const rebasedOver: number[] = [];

  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const timestamp = nextCommitTimestamp(options.clock(), previousTimestamp, request.timestampFloor);
    const commitInfo = buildCommitInfo(request.operation, {
      timestamp,
      readVersion,
      inCommitTimestamp: recordsInCommitTimestamps(state, request.actions),
    });
    const actions: Action[] = [{ commitInfo }, ...request.actions];
    const result = await tryCommitVersion(store, version, actions);
    if (result.outcome === "committed") {
      applyActions(state, request.actions);
      return {
        status: "committed",
        version,
        timestamp,
        snapshot: toSnapshot(state, { version, timestamp, commitInfo }),
        rebasedOver,
      };
    }
    if (creating) throw new TableAlreadyExistsError(LOG_DIR);
    const conflict = findConflict(request.requirements, version, result.winner);
    if (conflict) {
      const { kind, winningVersion, ...detail } = conflict;
      return {
        status: "conflict",
        error: new CommitConflictError(kind, readVersion ?? -1, winningVersion, detail),
      };
    }
    applyActions(state, result.winner);
    const winnerInfo = findCommitInfo(result.winner);
    previousTimestamp = winnerInfo?.inCommitTimestamp ?? winnerInfo?.timestamp ?? timestamp;
    rebasedOver.push(version);
    version += 1;
  }
  throw new CommitRetriesExhaustedError(maxAttempts, version - 1);
}

/**
 * Whether the version being written records its `inCommitTimestamp`: the table's protocol (after
 * this commit's own `protocol` and `metaData`, for a table being created) lists the feature and its
 * properties enable it (PROTOCOL.md "In-Commit Timestamps", "Enablement").
 */
function recordsInCommitTimestamps(state: TableState, actions: readonly Action[]): boolean {
  let protocol = state.protocol;
  let metadata = state.metadata;
  for (const action of actions) {
    if ("protocol" in action) protocol = action.protocol;
    if ("metaData" in action) metadata = action.metaData;
  }
  if (!metadata || !protocol?.writerFeatures?.includes("inCommitTimestamp")) return false;
  return tableProperties(metadata).inCommitTimestamps;
}

/** One put-if-absent of `_delta_log/<version>.json`; on loss, the winner's actions. */
export async function tryCommitVersion(
  store: ObjectStore,
  version: number,
  actions: readonly Action[],
): Promise<CommitAttempt> {
  const key = commitKey(version);
  const outcome = await store.putIfAbsent(key, encodeCommit(actions));
  if (outcome === "created") return { outcome: "committed" };
  return {
    outcome: "version-taken",
    winner: parseCommitFile(new TextDecoder().decode(await store.get(key)), key),
  };
}
