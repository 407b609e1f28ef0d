import type { ObjectStore } from "../../object-store/object-store.ts";
import { rootOf } from "../../object-store/prefixed-object-store.ts";
import { readCommits } from "../log/commit-reader.ts";
import { listLog } from "../log/log-listing.ts";
import {
  latestListedVersion,
  planLogSegment,
  type CommitRef,
  type LogListing,
  type LogSegment,
} from "../log/log-segment.ts";
import { assertReadable } from "../table/reader-features.ts";
import { loadSnapshotAndHead, replaySegment, type LoadSnapshotOptions } from "./snapshot-loader.ts";
import { advanceSnapshot, refreshSnapshot } from "./snapshot-refresh.ts";
import type { Snapshot } from "./snapshot.ts";

/**
 * The latest snapshot of a table, without listing the log and replaying everything since the last
 * checkpoint on every load. Two levels:
 *
 * 1. Per object-store view, weakly: a caller that keeps one view of a table for a unit of work (the
 *    engine keeps one per table per task) shares one snapshot between its writer, readers and views,
 *    advanced by reading only the commits after it (`refreshSnapshot`: one GET when nothing changed).
 * 2. Per process, by the table's folder in its store: the next task of a warm Lambda (or of the local
 *    runtime) lists the log from the version it last saw. One LIST answers both questions: the commit
 *    file of that version is still the one seen (same ETag: not a table dropped and made anew under
 *    the same name), and which commits came since: read and folded in, or, when a newer checkpoint
 *    is fewer GETs away, replayed from it (`planTailRead`). Another commit file, or a gap with no
 *    checkpoint after it, loads the table afresh.
 *
 * Reading forward is exact as long as the log is only appended to, which Delta guarantees for a
 * table's lifetime.
 */
const held = new WeakMap<ObjectStore, Snapshot>();

/** What this process last listed of a table: the snapshot, and its commit file's ETag. */
interface Seen {
  readonly snapshot: Snapshot;
  readonly etag: string;
}

/** Tables per store kept at once (least recently used dropped first). */
const MAX_TABLES_SEEN = 64;
const seen = new WeakMap<ObjectStore, Map<string, Seen>>();

/** The latest snapshot of the table in `store`, advanced from the one held for this view. */
export async function currentSnapshot(
  store: ObjectStore,
  options: Pick<LoadSnapshotOptions, "location"> = {},
): Promise<Snapshot> {
  const known = held.get(store);
  if (!known) {
    const loaded = await latestSnapshot(store, options);
    rememberSnapshot(store, loaded);
    return loaded;
  }
  const snapshot = await refreshSnapshot(store, known);
  // A newer commit may have upgraded the protocol past what this reader implements.
  if (snapshot !== known) assertReadable(snapshot.protocol, snapshot.metadata);
  rememberSnapshot(store, snapshot);
  return snapshot;
}

/** Tells the cache about a version this process committed or read (only a newer one replaces). */
export function rememberSnapshot(store: ObjectStore, snapshot: Snapshot): void {
  const known = held.get(store);
  if (!known || snapshot.version > known.version) held.set(store, snapshot);
}

/** The latest snapshot, from what this process saw of the table when that still holds. */
async function latestSnapshot(
  store: ObjectStore,
  options: Pick<LoadSnapshotOptions, "location">,
): Promise<Snapshot> {
  const root = rootOf(store);
  const tables = seen.get(root.store) ?? new Map<string, Seen>();
  seen.set(root.store, tables);
  const known = tables.get(root.prefix);
  const advanced = known && (await advanceSeen(store, known));
  if (advanced) {
    see(tables, root.prefix, advanced);
    return advanced.snapshot;
  }
  const { snapshot, head } = await loadSnapshotAndHead(store, options);
  if (head?.etag) see(tables, root.prefix, { snapshot, etag: head.etag });
  else tables.delete(root.prefix);
  return snapshot;
}

/** `known` brought up to date from one listing, or `undefined` when the listing says to load afresh. */
async function advanceSeen(store: ObjectStore, known: Seen): Promise<Seen | undefined> {
  const tail = await listLog(store, known.snapshot.version);
  if (tail.commits.get(known.snapshot.version)?.etag !== known.etag) return undefined;
  const plan = planTailRead(known.snapshot.version, tail);
  if (!plan) return undefined;
  if (plan.read === "checkpoint") {
    const { snapshot, head } = await replaySegment(store, tail, plan.segment);
    return head?.etag ? { snapshot, etag: head.etag } : undefined;
  }
  const last = plan.commits.at(-1);
  if (!last) return known;
  if (!last.etag) return undefined;
  const snapshot = advanceSnapshot(known.snapshot, await readCommits(store, plan.commits));
  assertReadable(snapshot.protocol, snapshot.metadata);
  return { snapshot, etag: last.etag };
}

/**
 * How to reach the latest version from the one held, given the listing of the log after it
 * (`tail`), in the fewest GETs: fold in the commits since (one GET each), or, when a newer
 * checkpoint is listed and reading it and the commits after it takes fewer GETs, replay from that
 * checkpoint — planned from this same listing, so no `_last_checkpoint` read and no second LIST.
 * A tie reads the commits (no Parquet to decode). `undefined`: the tail cannot be read forward
 * (a commit missing since the version held, and no checkpoint after it to start from).
 */
export function planTailRead(
  from: number,
  tail: LogListing,
):
  | { readonly read: "commits"; readonly commits: readonly CommitRef[] }
  | { readonly read: "checkpoint"; readonly segment: LogSegment }
  | undefined {
  const commits = [...tail.commits.values()]
    .filter((ref) => ref.version > from)
    .sort((a, b) => a.version - b.version);
  const latest = latestListedVersion(tail) ?? from;
  const forward =
    commits.every((ref, i) => ref.version === from + 1 + i) && (commits.at(-1)?.version ?? from) === latest;
  const newest = Math.max(-1, ...[...tail.checkpoints.keys()].filter((version) => version > from));
  if (newest < 0) return forward ? { read: "commits", commits } : undefined;
  let segment: LogSegment;
  try {
    segment = planLogSegment(tail);
  } catch {
    return forward ? { read: "commits", commits } : undefined;
  }
  // A segment that ends at its checkpoint reads that version's commit too, for its commit info.
  const checkpointReads = (segment.checkpoint?.keys.length ?? 0) + Math.max(1, segment.commits.length);
  if (forward && commits.length <= checkpointReads) return { read: "commits", commits };
  return { read: "checkpoint", segment };
}

function see(tables: Map<string, Seen>, prefix: string, entry: Seen): void {
  tables.delete(prefix); // most recently used last
  tables.set(prefix, entry);
  while (tables.size > MAX_TABLES_SEEN) tables.delete(tables.keys().next().value!);
}
