import type { IncrementalListingMode } from "../pipeline/definition-schema.ts";
import { compareKeys } from "../object-store/object-key.ts";
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
 *   2. After `INCREMENTAL_LISTINGS_BETWEEN_FULL` consecutive incremental listings the next listing
 *      is full (Databricks: a full listing after 7 consecutive incremental ones). A batch records
 *      its count in its listing state; an update that finds nothing writes no batch, so this
 *      process counts those (`IdleListings`, by the batch they follow).
 *   3. A full listing that finds a new key sorting before the greatest key processed marks the path
 *      unordered: from then on every listing is full (so late keys a batch left for the next, by
 *      `max_files_per_batch`, are listed again).
 *   4. An incremental listing that finds nothing new is followed by a full one while the flow has
 *      processed fewer than `ONE_LISTING_PAGE` files (the path then fits one LIST, so the full
 *      listing costs what the incremental one does), and in a process that has no count for the
 *      batch before it (a cold start, another Lambda's batch). A late name is so read by the first
 *      update that finds nothing else new while the path is small, else by the 8th listing after it
 *      landed, whichever updates made them: as on Databricks, a late name waits for a full
 *      listing, and is never skipped. Names that do not sort in arrival order (`9.json` then
 *      `10.json`) are so found at the first full listing, which marks the path unordered. Past the
 *      first page, an update lists once, after the greatest key processed, however many files the
 *      path holds, but for every 8th listing: an idle pipeline does not list its whole path at each
 *      update.
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

/** Keys one LIST answers (S3's page): a full listing of a path that holds fewer costs one request. */
export const ONE_LISTING_PAGE = 1000;

/** What an incremental listing found, and what is known of the listings before it. */
export interface IncrementalListing {
  /** Whether it found keys not yet processed. */
  readonly foundNew: boolean;
  /** Incremental listings since the last full one, this one included. */
  readonly sinceFull: number;
  /** Whether this process has counted the listings since the batch before (step 2). */
  readonly counted: boolean;
  /** Files the flow has processed: about what the path holds. */
  readonly processed: number;
}

/** Whether an incremental listing is followed by a full one (steps 2, 4). */
export function fullListingDue(mode: IncrementalListingMode, listing: IncrementalListing): boolean {
  if (mode !== "auto") return false;
  if (listing.sinceFull > INCREMENTAL_LISTINGS_BETWEEN_FULL) return true;
  return !listing.foundNew && (!listing.counted || listing.processed < ONE_LISTING_PAGE);
}

/**
 * Incremental listings since the last full one, after each batch this process planned or listed
 * after (by a key only that batch has, its changelog's): an update that finds nothing writes no
 * state of its own, so its listing is counted here (step 2). Bounded, least recently used first
 * dropped: a batch whose count is dropped is listed in full at its next idle update, as after a
 * cold start.
 */
export class IdleListings {
  readonly #counts = new Map<string, number>();

  constructor(private readonly capacity = 10_000) {}

  /** Incremental listings since the last full one after `batch`, or undefined when this process has no count. */
  sinceFull(batch: string): number | undefined {
    return this.#counts.get(batch);
  }

  record(batch: string, sinceFull: number): void {
    this.#counts.delete(batch);
    this.#counts.set(batch, sinceFull);
    if (this.#counts.size > this.capacity) this.#counts.delete(this.#counts.keys().next().value!);
  }
}

/**
 * The listing state after batch `seq`: `full` says whether its files came from a full listing,
 * `fresh` are the new keys that listing found, `chosen` those the batch takes; an incremental one
 * was the `sinceFull`th since the last full listing.
 */
export function listingAfter(
  previous: ListingState | undefined,
  listing: {
    readonly full: boolean;
    readonly fresh: readonly string[];
    readonly chosen: readonly string[];
    readonly sinceFull: number;
  },
  now: number,
  seq: number,
): ListingState {
  const after = listing.chosen.reduce((a, b) => (compareKeys(a, b) >= 0 ? a : b), previous?.after ?? "");
  if (!listing.full && previous) return { ...previous, after, incremental: listing.sinceFull, seq };
  const late = previous !== undefined && listing.fresh.some((key) => compareKeys(key, previous.after) < 0);
  return { after, incremental: 0, fullAt: now, ordered: (previous?.ordered ?? true) && !late, seq };
}
