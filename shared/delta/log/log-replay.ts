import type { Action, CommitInfo, DomainMetadata, Metadata, Protocol, RemoveFile, Txn } from "./actions.ts";
import { CorruptLogError } from "../errors.ts";
import { decodeLogPath } from "./data-file-paths.ts";
import type { Snapshot, TombstoneSource } from "../read/snapshot.ts";
import { LiveFiles, type CheckpointFiles } from "./live-files.ts";

/**
 * Action reconciliation (PROTOCOL.md "Action Reconciliation"), pure: actions in log order
 * (checkpoint first, then commits by ascending version, each commit's lines in file order) fold into
 * the table state. I/O lives in `snapshot-loader.ts`.
 *
 * - the latest `protocol` and `metaData` win;
 * - `txn`: the latest action per `appId` wins (the protocol does not assume versions only grow);
 * - `domainMetadata`: the latest per `domain` wins, `removed: true` drops it;
 * - `add`/`remove`: keyed by the decoded `path` (no deletion vectors: the dvId is always NULL), the
 *   newest reference wins; an `add` clears a tombstone and a `remove` replaces a live file. A
 *   checkpoint's tombstones are left out until asked for (`snapshotTombstones`): they are older than
 *   every replayed commit, so a commit's reference to their path always wins;
 * - `commitInfo` belongs to its commit only and is not part of the state (see `toSnapshot`).
 */
export interface TableState {
  protocol: Protocol | undefined;
  metadata: Metadata | undefined;
  readonly files: LiveFiles;
  readonly commitTombstones: Map<string, RemoveFile>;
  checkpointTombstones: TombstoneSource | undefined;
  readonly txns: Map<string, Txn>;
  readonly domains: Map<string, DomainMetadata>;
}

export function emptyTableState(): TableState {
  return {
    protocol: undefined,
    metadata: undefined,
    files: LiveFiles.empty(),
    commitTombstones: new Map(),
    checkpointTombstones: undefined,
    txns: new Map(),
    domains: new Map(),
  };
}

/**
 * The state a checkpoint's adds make, before its other actions are applied: its files (their
 * actions built when first read, see `LiveFiles`) in the place of the adds it would replay.
 */
export function checkpointTableState(files: CheckpointFiles): TableState {
  return { ...emptyTableState(), files: LiveFiles.fromCheckpoint(files) };
}

/** Applies `actions` to `state` in place, in order. */
export function applyActions(state: TableState, actions: Iterable<Action>): TableState {
  for (const action of actions) {
    if ("add" in action) {
      const key = decodeLogPath(action.add.path);
      state.commitTombstones.delete(key);
      state.files.set(key, action.add);
    } else if ("remove" in action) {
      const key = decodeLogPath(action.remove.path);
      state.files.delete(key);
      state.commitTombstones.set(key, action.remove);
    } else if ("protocol" in action) {
      state.protocol = action.protocol;
    } else if ("metaData" in action) {
      state.metadata = action.metaData;
    } else if ("txn" in action) {
      state.txns.set(action.txn.appId, action.txn);
    } else if ("domainMetadata" in action) {
      const domain = action.domainMetadata;
      if (domain.removed) state.domains.delete(domain.domain);
      else state.domains.set(domain.domain, domain);
    }
    // `cdc` only matters to the change data feed; `commitInfo` only to its own commit.
  }
  return state;
}

/** Reconciles `actions` from an empty state. */
export function replayActions(actions: Iterable<Action>): TableState {
  return applyActions(emptyTableState(), actions);
}

/**
 * Freezes a reconciled state into the `Snapshot` of `version`. A state without `protocol` or
 * `metaData` is not a table (PROTOCOL.md "Action Reconciliation": a snapshot has a single one of
 * each).
 */
export function toSnapshot(
  state: TableState,
  at: { readonly version: number; readonly timestamp: number; readonly commitInfo?: CommitInfo },
): Snapshot {
  if (!state.protocol) {
    throw new CorruptLogError(`no protocol action in the log up to version ${at.version}`, {
      data: { version: at.version, missing: "protocol" },
    });
  }
  if (!state.metadata) {
    throw new CorruptLogError(`no metaData action in the log up to version ${at.version}`, {
      data: { version: at.version, missing: "metaData" },
    });
  }
  return {
    version: at.version,
    protocol: state.protocol,
    metadata: state.metadata,
    files: state.files.copy(),
    commitTombstones: new Map(state.commitTombstones),
    ...(state.checkpointTombstones ? { checkpointTombstones: state.checkpointTombstones } : {}),
    txns: new Map(state.txns),
    domains: new Map(state.domains),
    timestamp: at.timestamp,
    ...(at.commitInfo ? { commitInfo: at.commitInfo } : {}),
  };
}

/**
 * Every tombstone of `snapshot`: the checkpoint's (read now if not yet), less the paths a later
 * commit added again, under those of the replayed commits, which are newer.
 */
export async function snapshotTombstones(snapshot: Snapshot): Promise<ReadonlyMap<string, RemoveFile>> {
  if (!snapshot.checkpointTombstones) return snapshot.commitTombstones;
  const tombstones = new Map<string, RemoveFile>();
  for (const [path, remove] of await snapshot.checkpointTombstones()) {
    if (!snapshot.files.has(path)) tombstones.set(path, remove);
  }
  for (const [path, remove] of snapshot.commitTombstones) tombstones.set(path, remove);
  return tombstones;
}
