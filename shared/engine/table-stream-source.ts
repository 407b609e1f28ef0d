import { quoteLiteral } from "../duck/sql-text.ts";
import {
  type AddFile,
  commitTimestamp,
  dataFileKey,
  fileRelationSql,
  type FileSource,
  findCommitInfo,
  listLog,
  currentSnapshot,
  changeRelationSql,
  planCommitChanges,
  partitionConstants,
  readCommits,
  restoredVersion,
  type Snapshot,
  statsRecordCount,
  tableColumns,
  TableNotFoundError,
} from "../delta/index.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { SourceUnavailableError } from "./errors.ts";
import type { Sandbox } from "./sandbox.ts";
import type { TableOffset } from "./source-offsets.ts";
import {
  planChangeFeedBatch,
  planTableBatch,
  type BatchBounds,
  type SourceCommit,
  type TableBatchPlan,
} from "./table-stream-plan.ts";

/**
 * The I/O around `planTableBatch` for `stream` and `delta` sources: reads the source table's log from
 * the reader's offset, and loads a planned batch's rows into the sandbox.
 */

export interface TableSourceRef {
  /** The source table, through the object-store view of its root folder. */
  readonly store: ObjectStore;
  readonly flow: string;
  /** How users name it, for messages (dataset name or path). */
  readonly upstream: string;
  /** Read the table's change data feed (every commit's change rows), not only its appends. */
  readonly changeFeed?: boolean;
  /**
   * Plan up to this snapshot of the table, not its latest: a reader that records the version it
   * read (a materialized view) must take exactly the rows of that version's lineage.
   */
  readonly snapshot?: Snapshot;
}

export type PlannedTableBatch = TableBatchPlan & {
  readonly start: TableOffset;
  /** The `add` action of every file the slices read, by path. */
  readonly files: ReadonlyMap<string, AddFile>;
  readonly snapshot: Snapshot;
};

/**
 * Plans the next batch. `start` undefined means a fresh reader: it starts at `startingVersion` (or 0).
 * Returns undefined when the source table does not exist yet (an upstream that has written nothing).
 */
export async function planTableSource(
  source: TableSourceRef,
  start: TableOffset | undefined,
  bounds: BatchBounds,
  startingVersion = 0,
): Promise<PlannedTableBatch | undefined> {
  let snapshot: Snapshot;
  try {
    snapshot = source.snapshot ?? (await currentSnapshot(source.store));
  } catch (error) {
    if (error instanceof TableNotFoundError) return undefined;
    throw error;
  }
  let from: TableOffset = start ?? {
    kind: "table",
    tableId: snapshot.metadata.id,
    nextVersion: startingVersion,
    rowsRead: 0,
  };
  const files = new Map<string, AddFile>();
  let commits =
    from.tableId === snapshot.metadata.id
      ? await readSourceCommits(source, from.nextVersion, snapshot.version, files)
      : [];
  // A reader starting afresh (its dataset refreshed with the upstream's TRUNCATE, or after it) begins
  // after the upstream's latest TRUNCATE: that commit removed every row before it.
  const truncate = start ? undefined : commits.filter((c) => c.operation === "TRUNCATE").at(-1);
  if (truncate) {
    from = { ...from, nextVersion: truncate.version + 1 };
    commits = commits.filter((c) => c.version > truncate.version);
  }
  const plan = (source.changeFeed ? planChangeFeedBatch : planTableBatch)(
    {
      flow: source.flow,
      upstream: source.upstream,
      tableId: snapshot.metadata.id,
      latestVersion: snapshot.version,
    },
    from,
    commits,
    bounds,
  );
  return { ...plan, start: from, files, snapshot };
}

/** Commits `from..to` in the planner's terms; every added file lands in `files`. */
async function readSourceCommits(
  { store, upstream }: TableSourceRef,
  from: number,
  to: number,
  files: Map<string, AddFile>,
): Promise<SourceCommit[]> {
  if (from > to) return [];
  const listing = await listLog(store, from);
  const refs = [...listing.commits.values()]
    .filter((ref) => ref.version >= from && ref.version <= to)
    .sort((a, b) => a.version - b.version);
  // The log's cleanup removes commits older than its retention once a checkpoint covers them: a
  // reader that far behind cannot know what they did.
  const gap = refs.findIndex((ref, i) => ref.version !== from + i);
  if (gap !== -1 || refs.length !== to - from + 1) {
    const missing = gap === -1 ? from + refs.length : from + gap;
    throw new SourceUnavailableError(
      `version ${missing} of ${upstream}'s log is gone (removed by its log retention, delta.logRetentionDuration): a reader at version ${from} cannot follow the table; fully refresh the reader`,
    );
  }
  const out: SourceCommit[] = [];
  for (const { ref, actions } of await readCommits(store, refs)) {
    const commitInfo = findCommitInfo(actions);
    const added: { path: string; rows: number; bytes: number }[] = [];
    let removesData = false;
    for (const action of actions) {
      if ("add" in action && action.add.dataChange) {
        files.set(action.add.path, action.add);
        added.push({ path: action.add.path, rows: recordsOf(action.add), bytes: action.add.size });
      } else if ("remove" in action && action.remove.dataChange) {
        removesData = true;
      }
    }
    const restored = restoredVersion(commitInfo);
    const timestamp = commitTimestamp(commitInfo, ref.lastModified);
    out.push({
      version: ref.version,
      timestamp,
      operation: commitInfo?.operation ?? "UNKNOWN",
      ...(restored !== undefined ? { restoredVersion: restored } : {}),
      addedFiles: added,
      removesData,
      changes: planCommitChanges(ref.version, timestamp, actions),
    });
  }
  return out;
}

/**
 * Rows in a file from its stats. Ebb's writer always records them; a file without `numRecords`
 * (some external writers omit stats) cannot be sliced, so it is refused with what to do.
 */
function recordsOf(add: AddFile): number {
  const records = statsRecordCount(add.stats);
  if (records === undefined) {
    throw new SourceUnavailableError(
      `data file ${add.path} has no numRecords statistic: Ebb streams Delta tables whose writers record file statistics (delta.dataSkippingNumIndexedCols left at its default)`,
    );
  }
  return records;
}

/**
 * Copies the batch's files into the sandbox and returns the SELECT over its rows, with the table's
 * columns (schema of the latest snapshot; columns a file lacks read as NULL).
 */
export async function loadTableBatch(
  source: TableSourceRef,
  plan: PlannedTableBatch,
  sandbox: Sandbox,
): Promise<string> {
  if (plan.changes) {
    const files = [];
    for (const file of plan.changes)
      files.push({
        file,
        localPath: await sandbox.takeObject(source.store, dataFileKey(file.path), ".parquet"),
      });
    return changeRelationSql(sandbox.duck, plan.snapshot, files);
  }
  const { schema, columns } = tableColumns(plan.snapshot);
  const partitionColumns = plan.snapshot.metadata.partitionColumns;
  const sources: FileSource[] = [];
  for (const slice of plan.slices) {
    const add = plan.files.get(slice.path)!;
    const whole = await sandbox.takeObject(source.store, dataFileKey(add.path), ".parquet");
    let localPath = whole;
    if (slice.firstRow > 0 || slice.endRow < slice.fileRows) {
      localPath = await sandbox.newPath(".parquet");
      await sandbox.run(
        `COPY (SELECT * EXCLUDE (file_row_number) FROM read_parquet(${quoteLiteral(whole)}, file_row_number = true) ` +
          `WHERE file_row_number >= ${slice.firstRow} AND file_row_number < ${slice.endRow} ORDER BY file_row_number) ` +
          `TO ${quoteLiteral(localPath)} (FORMAT parquet)`,
      );
    }
    sources.push({ localPath, constants: partitionConstants(schema, partitionColumns, add.partitionValues) });
  }
  return fileRelationSql(sandbox.duck, sources, columns);
}
