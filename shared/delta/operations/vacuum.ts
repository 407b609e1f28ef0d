import { RetentionTooShortError } from "../errors.ts";
import type { RemoveFile } from "../log/actions.ts";
import { LOG_DIR } from "../log/log-paths.ts";
import { snapshotTombstones } from "../log/log-replay.ts";
import { assertWritable } from "../table/writer-features.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { CHANGE_DATA_DIR } from "../log/data-file-paths.ts";
import { tableProperties } from "../table/table-properties.ts";
import { mapInParallel } from "../../object-store/map-in-parallel.ts";
import { listKeys, type ObjectInfo, type ObjectStore } from "../../object-store/object-store.ts";

/**
 * VACUUM: delete files the table no longer needs.
 *
 * 1. Retention: the caller's, else the table's `delta.deletedFileRetentionDuration` (default
 *    7 days = 168 h). A retention shorter than the table's needs `allowShortRetention`, since readers
 *    of versions inside the table's window could lose files.
 * 2. List every object under the table root, except `_delta_log/` (never touched) and hidden paths
 *    (a segment starting with `_` or `.`, like Delta), but including `_change_data/`.
 * 3. Keep every file the latest snapshot references, and every file a protected version (a rewind
 *    point) references. Every other file is a candidate. Change data files belong to commits, not
 *    to any version's state, so, as in Delta, they go by age alone: reading the change feed across
 *    versions older than the retention is not promised.
 * 4. Delete a candidate only when it is older than the retention: a tombstoned file by its
 *    `deletionTimestamp` (PROTOCOL.md "Add File and Remove File": a tombstone expires when now exceeds
 *    its timestamp plus the threshold), an untracked file (orphan of a failed commit, a CDC file) by
 *    its last-modified time.
 * 5. A dry run returns the plan; execution deletes its files in batches. No log entry is written.
 */

export interface VacuumPlan {
  readonly version: number;
  readonly retentionMs: number;
  /** Files last needed before this instant may go. */
  readonly cutoff: number;
  readonly filesToDelete: readonly { readonly key: string; readonly size: number }[];
  /** Unreferenced files kept because they are inside the retention window. */
  readonly filesWithinRetention: number;
  /** Files kept only because a protected version references them. */
  readonly filesProtected: number;
}

export interface VacuumOptions {
  readonly now: number;
  /** Retention to apply; default the table's `delta.deletedFileRetentionDuration`. */
  readonly retentionMs?: number;
  /** Allow a retention shorter than the table's setting. */
  readonly allowShortRetention?: boolean;
}

/** Checks the retention against the table setting and returns the one to apply. */
export function effectiveRetentionMs(latest: Snapshot, options: Omit<VacuumOptions, "now">): number {
  const tableRetention = tableProperties(latest.metadata).deletedFileRetentionMs;
  const retention = options.retentionMs ?? tableRetention;
  if (retention < tableRetention && !options.allowShortRetention) {
    throw new RetentionTooShortError(retention, tableRetention);
  }
  return retention;
}

/** The keys VACUUM weighs: every listed one but the log's and hidden files and those a version still needs. */
export interface VacuumCandidates {
  /** Keys kept only because a protected version references them. */
  readonly protected: number;
  /** Unreferenced keys, each with its tombstone where the latest snapshot has one. */
  readonly unreferenced: readonly { readonly key: string; readonly tombstone?: RemoveFile }[];
}

/** Sorts `keys` (every key under the root) into the protected and the unreferenced. */
export function vacuumCandidates(
  latest: Snapshot,
  tombstones: ReadonlyMap<string, RemoveFile>,
  protectedSnapshots: readonly Snapshot[],
  keys: Iterable<string>,
): VacuumCandidates {
  const protectedKeys = new Set(protectedSnapshots.flatMap((snapshot) => [...snapshot.files.keys()]));
  const unreferenced: { key: string; tombstone?: RemoveFile }[] = [];
  let filesProtected = 0;
  for (const key of keys) {
    if (!isVacuumable(key) || latest.files.has(key)) continue;
    if (protectedKeys.has(key)) filesProtected += 1;
    else {
      const tombstone = tombstones.get(key);
      unreferenced.push(tombstone ? { key, tombstone } : { key });
    }
  }
  return { protected: filesProtected, unreferenced };
}

/**
 * Whether planning needs the object's own metadata (a `head`) for an unreferenced key: its
 * modification time where no tombstone gives when it was removed (an untracked file), its size
 * where the tombstone does not give it.
 */
export function needsObjectInfo(tombstone: RemoveFile | undefined): boolean {
  return typeof tombstone?.deletionTimestamp !== "number" || typeof tombstone.size !== "number";
}

/**
 * Plans a vacuum of the candidates, given the object metadata of each unreferenced key
 * `needsObjectInfo` asks it for (`infos`; a key missing there was deleted since the listing, and
 * stays deleted).
 */
export function planVacuum(
  latest: Snapshot,
  candidates: VacuumCandidates,
  infos: ReadonlyMap<string, Pick<ObjectInfo, "size" | "lastModified">>,
  options: VacuumOptions,
): VacuumPlan {
  // PROTOCOL.md "Writer Requirements for Vacuum Protocol Check": VACUUM is a write; a table whose
  // writer features Ebb does not implement could lose files those features still need.
  assertWritable(latest.protocol, latest.metadata);
  const retentionMs = effectiveRetentionMs(latest, options);
  const cutoff = options.now - retentionMs;
  const filesToDelete: { key: string; size: number }[] = [];
  let filesWithinRetention = 0;
  for (const { key, tombstone } of candidates.unreferenced) {
    const info = infos.get(key);
    if (needsObjectInfo(tombstone) && !info) continue;
    const lastNeeded =
      typeof tombstone?.deletionTimestamp === "number" ? tombstone.deletionTimestamp : info!.lastModified;
    const size = typeof tombstone?.size === "number" ? tombstone.size : info!.size;
    if (lastNeeded < cutoff) filesToDelete.push({ key, size });
    else filesWithinRetention += 1;
  }
  const filesProtected = candidates.protected;
  return {
    version: latest.version,
    retentionMs,
    cutoff,
    filesToDelete,
    filesWithinRetention,
    filesProtected,
  };
}

/**
 * Hadoop's output committer's scratch folder: a Spark job writing into the table (Ebb's Spark engine
 * stages a batch's files there) keeps its files under it until its job commits, so what is left under
 * one is a job that died. No commit ever references it.
 */
const COMMITTER_SCRATCH = "_temporary";

/**
 * Whether VACUUM may consider `key`: data and change-data files and a dead job's committer scratch,
 * never the log or other hidden files.
 */
export function isVacuumable(key: string): boolean {
  if (key.startsWith(LOG_DIR)) return false;
  const segments = key.startsWith(CHANGE_DATA_DIR)
    ? key.slice(CHANGE_DATA_DIR.length).split("/")
    : key.split("/");
  const scratch = segments.indexOf(COMMITTER_SCRATCH);
  if (scratch >= 0 && scratch < segments.length - 1)
    return isVacuumable(segments.slice(0, scratch).join("/") + "/x");
  // A partition folder may start with `_` (`_col=value`); other `_`/`.` segments are hidden.
  return segments.every((segment, i) => {
    const hidden = segment.startsWith("_") || segment.startsWith(".");
    return !hidden || (i < segments.length - 1 && segment.includes("="));
  });
}

/** Lists the table and plans (the dry run). */
export async function dryRunVacuum(
  store: ObjectStore,
  latest: Snapshot,
  protectedSnapshots: readonly Snapshot[],
  options: VacuumOptions,
): Promise<VacuumPlan> {
  effectiveRetentionMs(latest, options); // fail before listing
  const listing = await listKeys(store, "");
  const candidates = vacuumCandidates(
    latest,
    await snapshotTombstones(latest),
    protectedSnapshots,
    listing.map((listed) => listed.key),
  );
  // Only the unreferenced files the log says too little of are `head`ed, and only where the
  // listing did not carry their metadata (a local folder's keys-only walk).
  const listed = new Map(listing.flatMap((l) => (l.info ? [[l.key, l.info] as const] : [])));
  const wanted = candidates.unreferenced.filter(({ tombstone }) => needsObjectInfo(tombstone));
  const infos = new Map<string, ObjectInfo>();
  await mapInParallel(wanted, HEAD_CONCURRENCY, async ({ key }) => {
    const info = listed.get(key) ?? (await store.head(key));
    if (info) infos.set(key, info);
  });
  return planVacuum(latest, candidates, infos, options);
}

/** `head`s in flight at once (S3 requests, or a local folder's `stat`s). */
const HEAD_CONCURRENCY = 32;

const DELETE_BATCH = 1000;

/** Deletes the plan's files. */
export async function executeVacuum(store: ObjectStore, plan: VacuumPlan): Promise<void> {
  const keys = plan.filesToDelete.map((file) => file.key);
  for (let i = 0; i < keys.length; i += DELETE_BATCH) await store.deleteMany(keys.slice(i, i + DELETE_BATCH));
}
