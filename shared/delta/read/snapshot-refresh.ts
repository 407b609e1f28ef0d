import { ObjectNotFoundError } from "../../object-store/errors.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { Action } from "../log/actions.ts";
import type { CommitRef } from "../log/log-segment.ts";
import { commitTimestamp, findCommitInfo, needsFileTime, parseCommitFile } from "../log/commit-file.ts";
import { commitKey } from "../log/log-paths.ts";
import { LiveFiles } from "../log/live-files.ts";
import { applyActions, toSnapshot, type TableState } from "../log/log-replay.ts";
import type { Snapshot } from "./snapshot.ts";

/**
 * Bringing a known snapshot up to date by reading only the commits after it (`<v+1>.json`, ... until
 * one is missing), instead of listing and replaying the log. A writer does this before each operation.
 */
export async function refreshSnapshot(store: ObjectStore, snapshot: Snapshot): Promise<Snapshot> {
  let state: TableState | undefined;
  let current = snapshot;
  for (let version = snapshot.version + 1; ; version++) {
    const actions = await readCommitIfPresent(store, version);
    if (!actions) return current;
    state ??= tableStateOf(snapshot);
    applyActions(state, actions);
    const commitInfo = findCommitInfo(actions);
    // Only a commit without an in-commit timestamp (another writer's, or an older table's) costs a HEAD.
    const head = needsFileTime(commitInfo) ? await store.head(commitKey(version)) : undefined;
    const timestamp = commitTimestamp(commitInfo, head?.lastModified ?? 0);
    current = toSnapshot(state, { version, timestamp, ...(commitInfo ? { commitInfo } : {}) });
  }
}

/** `snapshot` with `commits` (the versions right after it, in order, as read) folded in. */
export function advanceSnapshot(
  snapshot: Snapshot,
  commits: readonly { readonly ref: CommitRef; readonly actions: readonly Action[] }[],
): Snapshot {
  const last = commits.at(-1);
  if (!last) return snapshot;
  const state = tableStateOf(snapshot);
  for (const { actions } of commits) applyActions(state, actions);
  const commitInfo = findCommitInfo(last.actions);
  const timestamp = commitTimestamp(commitInfo, last.ref.lastModified);
  return toSnapshot(state, { version: last.ref.version, timestamp, ...(commitInfo ? { commitInfo } : {}) });
}

async function readCommitIfPresent(store: ObjectStore, version: number): Promise<Action[] | undefined> {
  const key = commitKey(version);
  try {
    return parseCommitFile(new TextDecoder().decode(await store.get(key)), key);
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return undefined;
    throw error;
  }
}

/** A mutable copy of a snapshot's state, to fold further commits into. */
export function tableStateOf(snapshot: Snapshot | undefined): TableState {
  return {
    protocol: snapshot?.protocol,
    metadata: snapshot?.metadata,
    files: LiveFiles.of(snapshot?.files),
    commitTombstones: new Map(snapshot?.commitTombstones ?? []),
    checkpointTombstones: snapshot?.checkpointTombstones,
    txns: new Map(snapshot?.txns ?? []),
    domains: new Map(snapshot?.domains ?? []),
  };
}
