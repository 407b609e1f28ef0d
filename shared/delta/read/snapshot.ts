import type {
  AddFile,
  CommitInfo,
  DomainMetadata,
  Metadata,
  Protocol,
  RemoveFile,
  Txn,
} from "../log/actions.ts";

/**
 * The state of a table at one version: the result of action reconciliation (PROTOCOL.md "Action
 * Reconciliation") over the log up to and including `version`.
 */
export interface Snapshot {
  readonly version: number;
  readonly protocol: Protocol;
  readonly metadata: Metadata;
  /** Live data files, keyed by their path as decoded from the log's URI-encoded `path`. */
  readonly files: ReadonlyMap<string, AddFile>;
  /**
   * Tombstones of the commits replayed after the checkpoint the snapshot was loaded from (of every
   * commit, without one), keyed like `files`. Those of the checkpoint are in `checkpointTombstones`;
   * `snapshotTombstones` joins the two.
   */
  readonly commitTombstones: ReadonlyMap<string, RemoveFile>;
  /**
   * The tombstones of the checkpoint the snapshot was loaded from, read when first asked for: only
   * checkpoints and VACUUM need them, and on a compacted table they are most of a checkpoint's rows.
   */
  readonly checkpointTombstones?: TombstoneSource;
  /** Latest `txn` per appId. */
  readonly txns: ReadonlyMap<string, Txn>;
  /** Live `domainMetadata` per domain (removed domains dropped). Optional: older builders omit it. */
  readonly domains?: ReadonlyMap<string, DomainMetadata>;
  /** Commit timestamp of `version` (in-commit timestamp, else commitInfo.timestamp, else file mtime). */
  readonly timestamp: number;
  /** The commitInfo of `version`, when that commit is still in the log. */
  readonly commitInfo?: CommitInfo;
}

/** Reads a checkpoint's tombstones (once: later calls share the first read), keyed like `files`. */
export type TombstoneSource = () => Promise<ReadonlyMap<string, RemoveFile>>;
