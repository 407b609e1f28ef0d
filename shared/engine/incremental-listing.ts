import type { IncrementalListingMode } from "../pipeline/definition-schema.ts";
import { compareKeys } from "../store/object-key.ts";
import type { FileSetOffset } from "./source-offsets.ts";

/**
 * How an `auto_loader` source lists its path, after Databricks' `cloudFiles.useIncrementalListing`.
 * A full listing reads every key under the path (one LIST per 1,000 keys, so it grows with the
 * path); an incremental one starts after the greatest key processed (S3's StartAfter), so it reads
 * only what sorts after it. Which keys were processed is always the file set (file-set-state.ts),
 * so a listing, whichever kind, never makes a file read twice; what a listing decides is only when
 * a file is seen.
 *
 * - `false`: every listing is full: a file is seen by the first batch after it lands, whatever its
 *   name, at the price of a listing that grows with the path.
 * - `true`: every listing is incremental: a file whose name sorts before one already processed is
 *   never seen. For paths whose names only grow (timestamps, sequence numbers).
 * - `auto` (the default, as on Databricks): incremental while names have arrived in order, and
 *   never skipping one that did not:
 *   1. The first listing is full.
 *   2. A batch after `INCREMENTAL_LISTINGS_BETWEEN_FULL` incremental listings takes its files from
 *      a full listing (Databricks: a full listing after 7 consecutive incremental ones). Only a
 *      batch resets the count, so the full listing runs once the incremental one found something
 *      new: a listing that finds nothing writes no batch, and would otherwise repeat it each update.
 *   3. A full listing that finds a new key sorting before the greatest key processed marks the path
 *      unordered: from then on every listing is full (so late keys a batch left for the next, by
 *      `max_files_per_batch`, are listed again).
 *   4. An incremental listing that finds nothing new is followed by a full one. A late name is so
 *      read by the first update whose incremental listing finds nothing new (the one after files
 *      stop landing, at the latest), or by the 8th batch after it landed (step 2), whichever comes
 *      first: as on Databricks, a late name waits for a full listing, and is never skipped. Names
 *      that do not sort in arrival order (`9.json` then `10.json`) are so found at the first full
 *      listing, which marks the path unordered. An update with nothing new lists twice; one that
 *      finds new files lists once, after the greatest key processed, however many files the path
 *      holds.
 *   5. The first listing after a rewind is full (a listing state the batch just before did not
 *      write was restored): the restored state may predate the late names that marked the path
 *      unordered, and a replay must read in its one update every file the restored checkpoint had
 *      not processed.
 */

export type ListingState = NonNullable<FileSetOffset["listing"]>;

/** Incremental listings between two full ones in `auto` mode. */
export const INCREMENTAL_LISTINGS_BETWEEN_FULL = 7;

/** Where the listing of batch `seq` starts: after `startAfter`, or (undefined) a full listing. */
export function listingStart(
  mode: IncrementalListingMode,
  state: ListingState | undefined,
  seq: number,
): string | undefined {
  if (mode === "false" || state === undefined) return undefined;
  if (mode === "auto" && (!state.ordered || state.seq !== seq - 1)) return undefined;
  return state.after;
}

/** Whether an incremental listing that found `foundNew` keys is followed by a full one (steps 2, 4). */
export function fullListingDue(
  mode: IncrementalListingMode,
  state: ListingState,
  foundNew: boolean,
): boolean {
  if (mode !== "auto") return false;
  return !foundNew || state.incremental >= INCREMENTAL_LISTINGS_BETWEEN_FULL;
}

/**
 * The listing state after batch `seq`: `full` says whether its files came from a full listing,
 * `fresh` are the new keys that listing found, `chosen` those the batch takes.
 */
export function listingAfter(
  previous: ListingState | undefined,
  listing: { readonly full: boolean; readonly fresh: readonly string[]; readonly chosen: readonly string[] },
  now: number,
  seq: number,
): ListingState {
  const after = listing.chosen.reduce((a, b) => (compareKeys(a, b) >= 0 ? a : b), previous?.after ?? "");
  if (!listing.full && previous) return { ...previous, after, incremental: previous.incremental + 1, seq };
  const late = previous !== undefined && listing.fresh.some((key) => compareKeys(key, previous.after) < 0);
  return { after, incremental: 0, fullAt: now, ordered: (previous?.ordered ?? true) && !late, seq };
}
