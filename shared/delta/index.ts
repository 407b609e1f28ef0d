/**
 * The Delta layer's front door: the names the rest of Ebb uses to open, read, write, restore and
 * vacuum Delta tables. Everything else in `shared/delta` is internal; a lint rule keeps callers out.
 *
 * Layout (one folder per part of the protocol):
 * - `log/`: the `_delta_log` format — actions, file names, commit files, checkpoints, replay.
 * - `table/`: table metadata — schema, properties, reader/writer features, creation.
 * - `read/`: snapshots, scans, history and the change data feed.
 * - `write/`: data files — rows in, parquet and statistics out, copy-on-write plumbing.
 * - `commit/`: turning a prepared operation into a version — requirements, conflicts, commit info.
 * - `operations/`: WRITE, DELETE, UPDATE, MERGE, RESTORE, VACUUM, OPTIMIZE, each planned then executed.
 * - `delta-table.ts`: one table, the entry point that runs an operation end to end.
 */
export {
  DeltaTable,
  type OptimizeRequest,
  type OptimizeResult,
  type TimeTravel,
  type VacuumRequest,
  type WriteOptions,
} from "./delta-table.ts";
export {
  ChangeDataNotRecordedError,
  ChangeFeedSchemaChangeError,
  CommitConflictError,
  CorruptLogError,
  DataFilesVacuumedError,
  DeltaError,
  InvalidColumnNameError,
  RetentionTooShortError,
  TableAlreadyExistsError,
  TableNotFoundError,
  TimestampOutOfRangeError,
  UnsupportedFeatureError,
  UnsupportedTablePropertyError,
  VersionNotFoundError,
} from "./errors.ts";

// Reading
export type { AddFile } from "./log/actions.ts";
export { commitTimestamp, findCommitInfo } from "./log/commit-file.ts";
export { readCommit, readCommits } from "./log/commit-reader.ts";
export { listLog } from "./log/log-listing.ts";
export { LAST_CHECKPOINT_KEY, LOG_DIR } from "./log/log-paths.ts";
export {
  CHANGE_FEED_COLUMNS,
  changeRelationSql,
  commitTimestampSql,
  openChangeFeed,
  planCommitChanges,
  type ChangeFile,
  type ChangeType,
} from "./read/change-data-feed.ts";
export { readCommitRange, readListedRange } from "./read/change-feed-commits.ts";
export { commitTimestampAt, listCommits, versionAtTimestamp } from "./read/commit-history.ts";
export { fileRelationSql, type FileSource } from "./read/file-relation.ts";
export { dataFileKey, toLogPath } from "./log/data-file-paths.ts";
export { openTableScan, partitionConstants, scanRows, tableColumns } from "./read/scan.ts";
export { loadSnapshot } from "./read/snapshot-loader.ts";
export { currentSnapshot, rememberSnapshot } from "./read/snapshot-cache.ts";
export { forgetDecodedCheckpoints } from "./read/checkpoint-cache.ts";
export type { Snapshot } from "./read/snapshot.ts";
export { snapshotTombstones } from "./log/log-replay.ts";
export { LocalFileCache } from "./read/table-file-rows.ts";
export { readHistory, type HistoryEntry } from "./read/table-history.ts";
export { deletedFileRetention, vacuumedFilesError } from "./read/vacuumed-files.ts";
export { restoredVersion, walkLineage, type LineageWalk } from "./read/table-lineage.ts";
export { duckType, parseSchema, type DeltaType, type StructField, type StructType } from "./table/schema.ts";
export { serializeSchema } from "./table/schema-serialization.ts";
export { assertWritableColumnNames } from "./table/column-names.ts";

// Writing: every commit takes the one path of commit/transaction.ts
export { recordCount, removeFor, type TxnMarker } from "./commit/file-actions.ts";
export { statsRecordCount } from "./log/stats-json.ts";
export { standardRequirements } from "./commit/commit-requirements.ts";
export type { OperationContext, PreparedCommit } from "./commit/operation-context.ts";
export { writesChangeData } from "./commit/operation-context.ts";
export { beginTransaction, commitTransaction, type TransactionOutcome } from "./commit/transaction.ts";
export { prepareStagedWrite, prepareWrite } from "./operations/write-operation.ts";
export type { RowSource } from "./write/row-source.ts";
export { prepareMerge, type MergeSpec } from "./operations/merge-operation.ts";
export { executeRestore, findMissingFiles, planRestore, type RestorePlan } from "./operations/restore.ts";
export { isVacuumable, type VacuumPlan } from "./operations/vacuum.ts";
export type { OptimizePlan } from "./operations/optimize.ts";
export { TABLE_PROPERTY } from "./table/table-properties.ts";
export { tablePropertiesError } from "./table/protocol-properties.ts";
export { executeShallowClone, type CloneOptions } from "./operations/shallow-clone.ts";
