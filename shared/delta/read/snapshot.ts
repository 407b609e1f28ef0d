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
  /** Tombstones still in the state (for VACUUM and history), keyed like `files`. */
  readonly tombstones: ReadonlyMap<string, RemoveFile>;
  /** Latest `txn` per appId. */
  readonly txns: ReadonlyMap<string, Txn>;
  /** Live `domainMetadata` per domain (removed domains dropped). Optional: older builders omit it. */
  readonly domains?: ReadonlyMap<string, DomainMetadata>;
  /** Commit timestamp of `version` (in-commit timestamp, else commitInfo.timestamp, else file mtime). */
  readonly timestamp: number;
  /** The commitInfo of `version`, when that commit is still in the log. */
  readonly commitInfo?: CommitInfo;
}
