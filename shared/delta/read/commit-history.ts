import type { ObjectStore } from "../../object-store/object-store.ts";
import type { CommitInfo } from "../log/actions.ts";
import { commitTimestamp, findCommitInfo } from "../log/commit-file.ts";
import { TableNotFoundError, TimestampOutOfRangeError } from "../errors.ts";
import { listLog } from "../log/log-listing.ts";
import { earliestReadableVersion, type LogListing } from "../log/log-segment.ts";
import { readCommit, readCommits } from "../log/commit-reader.ts";
import { commitKey } from "../log/log-paths.ts";

/** One commit still in the log, with its timestamp (for history and timestamp time travel). */
export interface CommitEntry {
  readonly version: number;
  /** Commit timestamp, epoch ms: in-commit timestamp, else commitInfo.timestamp, else file mtime. */
  readonly timestamp: number;
  readonly commitInfo?: CommitInfo;
}

/**
 * The commits in the log, ascending, optionally limited to `[from, to]`. Timestamps that are not
 * in-commit timestamps are made strictly increasing (each at least 1 ms after the one before), as
 * Delta does for clock skew between writers, so that "the latest commit at or before t" is defined.
 */
export async function listCommits(
  store: ObjectStore,
  range: { readonly from?: number; readonly to?: number } = {},
): Promise<CommitEntry[]> {
  return commitEntries(store, await listLog(store), range);
}

async function commitEntries(
  store: ObjectStore,
  listing: LogListing,
  range: { readonly from?: number; readonly to?: number },
): Promise<CommitEntry[]> {
  const refs = [...listing.commits.values()]
    .filter((ref) => ref.version >= (range.from ?? 0) && ref.version <= (range.to ?? Number.MAX_SAFE_INTEGER))
    .sort((a, b) => a.version - b.version);
  const entries: CommitEntry[] = [];
  let previous = Number.NEGATIVE_INFINITY;
  for (const { ref, actions } of await readCommits(store, refs)) {
    const commitInfo = findCommitInfo(actions);
    const recorded = commitTimestamp(commitInfo, ref.lastModified);
    // In-commit timestamps are authoritative (PROTOCOL.md "In-Commit Timestamps"); others are not.
    const timestamp =
      typeof commitInfo?.inCommitTimestamp === "number" ? recorded : Math.max(recorded, previous + 1);
    previous = timestamp;
    entries.push({ version: ref.version, timestamp, ...(commitInfo ? { commitInfo } : {}) });
  }
  return entries;
}

/**
 * The version to read "as of" `timestamp`: the latest commit at or before it, among the versions
 * that can still be reconstructed. A timestamp after the last commit gives the latest version;
 * one before the earliest readable commit throws `TimestampOutOfRangeError`.
 *
 * Commit timestamps only grow (in-commit timestamps by definition, and Ebb's writer writes
 * `max(now, previous + 1 ms)`), so this is a binary search that reads O(log n) commits rather than
 * the whole log. Under clock skew between other writers it may pick a neighbour of the commit
 * `listCommits` (which smooths skew) would pick.
 */
export async function versionAtTimestamp(store: ObjectStore, timestamp: number): Promise<number> {
  const listing = await listLog(store);
  const earliest = earliestReadableVersion(listing);
  if (earliest === undefined) throw new TableNotFoundError("");
  const refs = [...listing.commits.values()]
    .filter((r) => r.version >= earliest)
    .sort((a, b) => a.version - b.version);
  const timestampOf = async (index: number) => {
    const [read] = await readCommits(store, [refs[index]!]);
    return commitTimestamp(findCommitInfo(read!.actions), read!.ref.lastModified);
  };
  const firstTimestamp = refs.length > 0 ? await timestampOf(0) : undefined;
  if (firstTimestamp === undefined || timestamp < firstTimestamp) {
    throw new TimestampOutOfRangeError(
      timestamp,
      firstTimestamp === undefined ? undefined : { version: refs[0]!.version, timestamp: firstTimestamp },
    );
  }
  // Invariant: the commit at `low` is at or before `timestamp`; every commit after `high` is after it.
  let low = 0;
  let high = refs.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if ((await timestampOf(middle)) <= timestamp) low = middle;
    else high = middle - 1;
  }
  return refs[low]!.version;
}

/**
 * The timestamp of commit `version` as `listCommits` would give it (without the adjustment for
 * earlier commits). Throws `VersionNotFoundError` when the commit is not in the log.
 */
export async function commitTimestampAt(store: ObjectStore, version: number): Promise<number> {
  const [info, actions] = await Promise.all([store.head(commitKey(version)), readCommit(store, version)]);
  return commitTimestamp(findCommitInfo(actions), info?.lastModified ?? 0);
}
