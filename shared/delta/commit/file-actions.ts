import type { AddFile, RemoveFile, Txn } from "../log/actions.ts";
import { statsRecordCount } from "../log/stats-json.ts";

/**
 * The `remove` that retires a live file (PROTOCOL.md "Add File and Remove File"), with
 * `extendedFileMetadata` so that partition values, size and stats travel with the tombstone (the
 * change data feed reads removed rows from it, VACUUM sizes from it).
 */
export function removeFor(file: AddFile, deletionTimestamp: number): RemoveFile {
  return {
    path: file.path,
    deletionTimestamp,
    dataChange: true,
    extendedFileMetadata: true,
    partitionValues: file.partitionValues,
    size: file.size,
    ...(file.stats ? { stats: file.stats } : {}),
  };
}

/** Rows in a file according to its stats, 0 when it has none. */
export function recordCount(file: AddFile): number {
  return statsRecordCount(file.stats) ?? 0;
}

/** An application's progress marker (PROTOCOL.md "Transaction Identifiers"). */
export interface TxnMarker {
  readonly appId: string;
  readonly version: number;
}

/** The `txn` action recording `marker` at `now`. */
export function txnFor(marker: TxnMarker, now: number): Txn {
  return { appId: marker.appId, version: marker.version, lastUpdated: now };
}
