import { type ChangeFile, ChangeDataNotRecordedError, walkLineage } from "../delta/index.ts";
import { UpstreamChangedError, UpstreamRefreshedError, UpstreamRewoundError } from "./errors.ts";
import type { BatchSize } from "./batch-size.ts";
import type { TableOffset } from "./source-offsets.ts";

/**
 * Planning one micro-batch of a `stream` or `delta` source (pure): which rows of which versions to
 * read next, and the offset after them (semantics.md "Doing the rewind", "Refresh and reset").
 *
 * 1. A table whose id differs from the offset's was dropped and recreated: fail (refresh the reader).
 * 2. Walk the lineage back from the latest version to the last version the reader fully consumed
 *    (the Delta layer's `walkLineage`): a RESTORE commit `R` that restored `t` jumps to `t` (versions
 *    `t+1 .. R` are the abandoned timeline and the restore itself: skipped). A jump below what the reader consumed means it read abandoned
 *    data and was not rewound: fail (rewind or fully refresh the reader).
 * 3. Read the live versions in order: a TRUNCATE fails (refresh the reader too); any other commit that
 *    removes data fails (a stream cannot follow it); appends are read, rows in `add` order.
 * 4. Stop at the batch bounds (rows, files, bytes of the files read), possibly inside a version, and
 *    return the slices and the end offset. A file larger than the byte bound is read alone.
 *
 * A reader of the change data feed (`planChangeFeedBatch`) takes step 3 differently: every live
 * commit but a TRUNCATE is read, as its change rows (inserts, update images, deletes), whole versions
 * at a time.
 */

/** What the planner needs of one commit of the source table. */
export interface SourceCommit {
  readonly version: number;
  /** Commit timestamp, epoch ms. */
  readonly timestamp: number;
  readonly operation: string;
  /** For a RESTORE: the version it restored. */
  readonly restoredVersion?: number;
  /** Files added with `dataChange: true`, in commit order, with their row counts and sizes. */
  readonly addedFiles: readonly { readonly path: string; readonly rows: number; readonly bytes: number }[];
  /** Whether the commit removes data (`remove` with `dataChange: true`). */
  readonly removesData: boolean;
  /** The files holding the commit's change rows (the change data feed), or why the log has none. */
  readonly changes: readonly ChangeFile[] | ChangeDataNotRecordedError;
}

/** Rows `[firstRow, endRow)` of one data file added by `version`. */
export interface RowSlice {
  readonly version: number;
  readonly path: string;
  readonly firstRow: number;
  readonly endRow: number;
  /** Rows in the whole file (to read it whole when the slice covers it). */
  readonly fileRows: number;
  /** The whole file's bytes (what a batch's byte bound counts). */
  readonly fileBytes: number;
  /** Where the file's first row sits among the version's rows. */
  readonly versionRowStart: number;
}

export interface BatchBounds {
  readonly maxFiles?: number;
  readonly maxRows?: number;
  /** Bytes of the data files read (at least one file). */
  readonly maxBytes?: number;
  /** Re-plan a batch already planned: stop exactly at this end offset (other bounds are ignored). */
  readonly until?: TableOffset;
}

export interface TableBatchPlan {
  readonly slices: readonly RowSlice[];
  readonly rows: number;
  readonly end: TableOffset;
  /** What the batch reads: its files, their bytes, its rows (a change feed's: its change files). */
  readonly size: BatchSize;
  /** The newest source commit the batch consumes (for the causal commit timestamp), if any. */
  readonly newestCommitTimestamp?: number;
  /** RESTORE commits whose abandoned versions this batch skips. */
  readonly skippedRestores: readonly { readonly version: number; readonly restoredVersion: number }[];
  /** A change data feed batch: the files of its versions' change rows (its `slices` are empty). */
  readonly changes?: readonly ChangeFile[];
}

export interface TableStreamContext {
  readonly flow: string;
  /** The source as users name it (dataset name or path), for messages. */
  readonly upstream: string;
  readonly tableId: string;
  readonly latestVersion: number;
}

/** Plans the next batch from `start`. `commits` holds every version from `start.nextVersion` to the latest. */
export function planTableBatch(
  context: TableStreamContext,
  start: TableOffset,
  commits: readonly SourceCommit[],
  bounds: BatchBounds,
): TableBatchPlan {
  const { live, skippedRestores, byVersion } = liveVersions(context, start, commits);
  if (bounds.until) return cutAt(planTableBatch(context, start, commits, {}), bounds.until, commits);

  const slices: RowSlice[] = [];
  let rows = 0;
  let files = 0;
  let bytes = 0;
  let end: TableOffset = { ...start, nextVersion: context.latestVersion + 1, rowsRead: 0 };
  let stopped = false;
  for (const version of live) {
    const commit = byVersion.get(version)!;
    assertAppendOnly(context, commit);
    let position = 0;
    const skip = version === start.nextVersion ? start.rowsRead : 0;
    for (const file of commit.addedFiles) {
      const firstRow = Math.max(0, skip - position);
      position += file.rows;
      if (firstRow >= file.rows) continue;
      const overBytes = bounds.maxBytes !== undefined && files > 0 && bytes + file.bytes > bounds.maxBytes;
      if (atBound(bounds, rows, files) || overBytes) {
        stopped = true;
        break;
      }
      const take = Math.min(
        file.rows - firstRow,
        bounds.maxRows === undefined ? Infinity : bounds.maxRows - rows,
      );
      slices.push({
        version,
        path: file.path,
        firstRow,
        endRow: firstRow + take,
        fileRows: file.rows,
        fileBytes: file.bytes,
        versionRowStart: position - file.rows,
      });
      rows += take;
      files += 1;
      bytes += file.bytes;
      if (firstRow + take < file.rows) {
        end = { ...start, nextVersion: version, rowsRead: position - file.rows + firstRow + take };
        stopped = true;
        break;
      }
    }
    if (stopped) {
      if (end.nextVersion === context.latestVersion + 1)
        end = { ...start, nextVersion: version, rowsRead: rowsBefore(commit, slices, skip) };
      break;
    }
  }
  return finish(slices, end, commits, skippedRestores);
}

/**
 * Plans the next batch of the source's change data feed from `start`: whole live versions, until
 * `maxFiles` change files (at least one version), or exactly up to `until`.
 */
export function planChangeFeedBatch(
  context: TableStreamContext,
  start: TableOffset,
  commits: readonly SourceCommit[],
  bounds: BatchBounds,
): TableBatchPlan {
  const { live, skippedRestores, byVersion } = liveVersions(context, start, commits);
  const changes: ChangeFile[] = [];
  let end: TableOffset = { ...start, nextVersion: context.latestVersion + 1, rowsRead: 0 };
  let taken = 0;
  for (const version of live) {
    const stop = bounds.until
      ? version >= bounds.until.nextVersion
      : taken > 0 &&
        atBound({ ...(bounds.maxFiles ? { maxFiles: bounds.maxFiles } : {}) }, 0, changes.length);
    if (stop) {
      end = { ...start, nextVersion: version, rowsRead: 0 };
      break;
    }
    const commit = byVersion.get(version)!;
    if (commit.operation === "TRUNCATE" && commit.removesData)
      throw new UpstreamRefreshedError(context.flow, context.upstream, `TRUNCATE at version ${version}`);
    if (commit.changes instanceof ChangeDataNotRecordedError) throw commit.changes.forTable(context.upstream);
    changes.push(...commit.changes);
    taken += 1;
  }
  if (bounds.until) end = bounds.until;
  return { ...finish([], end, commits, skippedRestores), size: { files: changes.length }, changes };
}

function finish(
  slices: readonly RowSlice[],
  end: TableOffset,
  commits: readonly SourceCommit[],
  skippedRestores: readonly { version: number; restoredVersion: number }[],
): TableBatchPlan {
  const consumed = end.rowsRead > 0 ? end.nextVersion : end.nextVersion - 1;
  const newest = commits.filter((c) => c.version <= consumed).at(-1);
  const rows = slices.reduce((n, s) => n + s.endRow - s.firstRow, 0);
  return {
    slices,
    rows,
    end,
    size: { files: slices.length, bytes: slices.reduce((n, s) => n + s.fileBytes, 0), records: rows },
    ...(newest ? { newestCommitTimestamp: newest.timestamp } : {}),
    skippedRestores: skippedRestores.filter((r) => r.version <= consumed),
  };
}

/** The unbounded plan cut back to end exactly at `until` (re-reading a batch planned earlier). */
function cutAt(plan: TableBatchPlan, until: TableOffset, commits: readonly SourceCommit[]): TableBatchPlan {
  const slices: RowSlice[] = [];
  for (const slice of plan.slices) {
    if (slice.version > until.nextVersion) continue;
    if (slice.version < until.nextVersion) {
      slices.push(slice);
      continue;
    }
    const endRow = Math.min(slice.endRow, until.rowsRead - slice.versionRowStart);
    if (endRow > slice.firstRow) slices.push({ ...slice, endRow });
  }
  return finish(slices, until, commits, plan.skippedRestores);
}

/**
 * Step 2: the versions after the reader's position that lie on the latest version's lineage,
 * ascending (with the commits by version). A reader of a table since recreated cannot continue.
 */
function liveVersions(
  context: TableStreamContext,
  start: TableOffset,
  commits: readonly SourceCommit[],
): {
  live: number[];
  skippedRestores: { version: number; restoredVersion: number }[];
  byVersion: ReadonlyMap<number, SourceCommit>;
} {
  if (start.tableId !== context.tableId) {
    throw new UpstreamRefreshedError(context.flow, context.upstream, "DROP: the table was recreated");
  }
  const byVersion = new Map(commits.map((c) => [c.version, c]));
  const fullyConsumed = start.nextVersion - 1;
  const { live, restores } = walkLineage(context.latestVersion, fullyConsumed, (version) => {
    const commit = byVersion.get(version);
    if (!commit)
      throw new RangeError(`commit ${version} of ${context.upstream} was not given to the planner`);
    return commit.operation === "RESTORE" ? commit.restoredVersion : undefined;
  });
  // Only the walk's last jump can land at or below what the reader consumed: it ends the walk.
  const deepest = restores[0];
  if (deepest) {
    const partlyRead = start.rowsRead > 0 && deepest.restoredVersion < start.nextVersion;
    if (deepest.restoredVersion < fullyConsumed || partlyRead) {
      throw new UpstreamRewoundError(
        context.flow,
        context.upstream,
        deepest.restoredVersion,
        deepest.version,
        start.rowsRead > 0 ? start.nextVersion : fullyConsumed,
      );
    }
  }
  return { live: [...live], skippedRestores: [...restores], byVersion };
}

/** Step 3: only appends can be streamed. */
function assertAppendOnly(context: TableStreamContext, commit: SourceCommit): void {
  if (!commit.removesData) return;
  if (commit.operation === "TRUNCATE") {
    throw new UpstreamRefreshedError(context.flow, context.upstream, `TRUNCATE at version ${commit.version}`);
  }
  throw new UpstreamChangedError(context.flow, context.upstream, commit.version, commit.operation);
}

function atBound(bounds: BatchBounds, rows: number, files: number): boolean {
  return (
    (bounds.maxRows !== undefined && rows >= bounds.maxRows) ||
    (bounds.maxFiles !== undefined && files >= bounds.maxFiles)
  );
}

/** Rows of `commit` consumed once this batch's slices of it are read (for a stop at a file boundary). */
function rowsBefore(commit: SourceCommit, slices: readonly RowSlice[], skip: number): number {
  const read = slices
    .filter((s) => s.version === commit.version)
    .reduce((n, s) => n + s.endRow - s.firstRow, 0);
  return skip + read;
}
