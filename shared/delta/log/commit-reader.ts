import { ObjectNotFoundError } from "../../object-store/errors.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { Action } from "./actions.ts";
import { parseCommitFile } from "./commit-file.ts";
import { VersionNotFoundError } from "../errors.ts";
import { listLog } from "./log-listing.ts";
import { commitKey } from "./log-paths.ts";
import { earliestReadableVersion, latestListedVersion, type CommitRef } from "./log-segment.ts";

/** Commit files fetched at once. */
const COMMIT_READ_CONCURRENCY = 16;

/** The actions of commit `version`, in file order. Throws `VersionNotFoundError` if it is not in the log. */
export async function readCommit(store: ObjectStore, version: number): Promise<Action[]> {
  const key = commitKey(version);
  try {
    return parseCommitFile(new TextDecoder().decode(await store.get(key)), key);
  } catch (error) {
    if (!(error instanceof ObjectNotFoundError)) throw error;
    const listing = await listLog(store);
    const earliest = earliestReadableVersion(listing);
    const latest = latestListedVersion(listing);
    throw new VersionNotFoundError(
      version,
      earliest !== undefined && latest !== undefined ? { earliest, latest } : undefined,
      { cause: error },
    );
  }
}

/** Reads and parses `refs`, a bounded number at a time, keeping their order. */
export async function readCommits(
  store: ObjectStore,
  refs: readonly CommitRef[],
): Promise<{ ref: CommitRef; actions: Action[] }[]> {
  const out: { ref: CommitRef; actions: Action[] }[] = [];
  for (let i = 0; i < refs.length; i += COMMIT_READ_CONCURRENCY) {
    const batch = refs.slice(i, i + COMMIT_READ_CONCURRENCY);
    const texts = await Promise.all(batch.map((ref) => store.get(ref.key)));
    batch.forEach((ref, j) => {
      out.push({ ref, actions: parseCommitFile(new TextDecoder().decode(texts[j]), ref.key) });
    });
  }
  return out;
}
