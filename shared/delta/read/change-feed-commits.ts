import { ObjectNotFoundError } from "../../object-store/errors.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { Action } from "../log/actions.ts";
import { findCommitInfo, needsFileTime } from "../log/commit-file.ts";
import { readCommits } from "../log/commit-reader.ts";
import { listLog } from "../log/log-listing.ts";
import { commitKey } from "../log/log-paths.ts";
import { latestListedVersion, type CommitRef, type LogListing } from "../log/log-segment.ts";
import { VersionNotFoundError } from "../errors.ts";

/** One commit of a change feed's range, read and parsed. */
export interface RangeCommit {
  readonly ref: CommitRef;
  readonly actions: Action[];
}

/**
 * The commits `from` to `to` (default: the latest), ascending. A closed range of commits that carry
 * their own time (in-commit timestamps, which Ebb writes) is read by name, without listing the log:
 * the listing's only news would be the files' times. Otherwise, or when a commit is missing, the log
 * is listed (`readListedRange`), which answers or names the versions the log holds.
 */
export async function readCommitRange(
  store: ObjectStore,
  from: number,
  to: number | undefined,
): Promise<RangeCommit[]> {
  const named =
    to !== undefined && from >= 0 && from <= to ? await readNamedRange(store, from, to) : undefined;
  return named ?? readListedRange(store, from, to);
}

/** `readCommitRange` through a listing of the log from `from` on. */
export async function readListedRange(
  store: ObjectStore,
  from: number,
  to: number | undefined,
): Promise<RangeCommit[]> {
  const listing = await listRange(store, from, to);
  const end = to ?? latestListedVersion(listing) ?? 0;
  const refs = [...listing.commits.values()].filter((r) => r.version >= from && r.version <= end);
  return readCommits(store, refs);
}

/**
 * The range read by name, or `undefined` for the listing to answer: a commit is missing, or the first
 * has no in-commit timestamp (a table without them dates every commit by its file's time, which a
 * listing gives at once). The first commit is read alone so such a table reads it twice, not all.
 */
async function readNamedRange(
  store: ObjectStore,
  from: number,
  to: number,
): Promise<RangeCommit[] | undefined> {
  const read = async (first: number, last: number) => {
    const refs = Array.from({ length: last - first + 1 }, (_, i) => ({
      version: first + i,
      key: commitKey(first + i),
      lastModified: Number.NaN, // not known without a listing; used only when a commit has no time of its own
    }));
    try {
      const commits = await readCommits(store, refs);
      return commits.every(({ actions }) => !needsFileTime(findCommitInfo(actions))) ? commits : undefined;
    } catch (error) {
      if (error instanceof ObjectNotFoundError) return undefined;
      throw error;
    }
  };
  const head = await read(from, from);
  if (!head || from === to) return head;
  const rest = await read(from + 1, to);
  return rest && [...head, ...rest];
}

/**
 * The log's commits `from` to `to` (default: the latest), listed from `from` on: a feed of the last
 * commits of a long log does not list its whole history. A commit missing from the range is refused,
 * naming the versions the whole log holds.
 */
async function listRange(store: ObjectStore, from: number, to: number | undefined): Promise<LogListing> {
  const range = from >= 0 ? await listLog(store, from, to) : undefined;
  const last = to ?? (range && latestListedVersion(range));
  if (range && last !== undefined && from <= last) {
    let complete = true;
    for (let v = from; v <= last && complete; v++) complete = range.commits.has(v);
    if (complete) return range;
  }
  const listing = await listLog(store);
  const commitVersions = [...listing.commits.keys()];
  const available =
    commitVersions.length > 0
      ? { earliest: Math.min(...commitVersions), latest: Math.max(...commitVersions) }
      : undefined;
  const end = to ?? latestListedVersion(listing) ?? 0;
  if (from > end) throw new VersionNotFoundError(from, available);
  for (let v = from; v <= end; v++) {
    if (!listing.commits.has(v)) throw new VersionNotFoundError(v, available);
  }
  return listing;
}
