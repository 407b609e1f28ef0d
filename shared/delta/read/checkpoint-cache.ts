import type { ObjectStore } from "../../object-store/object-store.ts";
import type { Action, RemoveFile } from "../log/actions.ts";
import {
  fetchCheckpoint,
  readCheckpoint,
  readCheckpointTombstones,
  type CheckpointParts,
} from "../log/checkpoint-reader.ts";
import type { CheckpointFiles } from "../log/live-files.ts";
import { decodeLogPath } from "../log/data-file-paths.ts";
import type { CheckpointRef } from "../log/log-segment.ts";
import type { TombstoneSource } from "./snapshot.ts";

/**
 * A checkpoint's actions, and its adds' and tombstones' actions when first asked for (from the bytes
 * kept, not fetched again; each decoded once for every snapshot loaded from it).
 */
export interface DecodedCheckpoint {
  /** Its protocol, metaData, txn and domainMetadata actions. */
  readonly actions: readonly Action[];
  readonly files: CheckpointFiles;
  readonly tombstones: TombstoneSource;
}

/**
 * Decoded checkpoints, kept for the process's life (a warm Lambda's, the local runtime's). Each task
 * of an update loads the tables it touches afresh; without this every load of a checkpointed table
 * would fetch and decode the same Parquet again. A checkpoint file is never rewritten in
 * place, and its identity carries the parts' ETags and sizes (one without an ETag is not kept), so
 * a table dropped and made anew (whose checkpoint has the same name) is decoded afresh.
 */
const MAX_CHECKPOINTS = 64;
const decoded = new Map<string, Promise<DecodedCheckpoint>>();

export function decodedCheckpoint(store: ObjectStore, checkpoint: CheckpointRef): Promise<DecodedCheckpoint> {
  if (checkpoint.identity === "") return decode(store, checkpoint);
  const known = decoded.get(checkpoint.identity);
  if (known) {
    // Most recently used last: the first entry is the one to drop.
    decoded.delete(checkpoint.identity);
    decoded.set(checkpoint.identity, known);
    return known;
  }
  const reading = decode(store, checkpoint);
  decoded.set(checkpoint.identity, reading);
  reading.catch(() => decoded.delete(checkpoint.identity));
  while (decoded.size > MAX_CHECKPOINTS) decoded.delete(decoded.keys().next().value!);
  return reading;
}

/** Forgets every decoded checkpoint: the next load of each decodes it again (a cold start's cost). */
export function forgetDecodedCheckpoints(): void {
  decoded.clear();
}

async function decode(store: ObjectStore, checkpoint: CheckpointRef): Promise<DecodedCheckpoint> {
  const parts = await fetchCheckpoint(store, checkpoint);
  const { actions, files } = readCheckpoint(parts);
  return { actions, files, tombstones: tombstonesOf(parts) };
}

/** The checkpoint's tombstones keyed like a snapshot's files, read on the first call. */
function tombstonesOf(parts: CheckpointParts): TombstoneSource {
  let reading: Promise<ReadonlyMap<string, RemoveFile>> | undefined;
  return () =>
    (reading ??= Promise.resolve().then(
      () => new Map(readCheckpointTombstones(parts).map((remove) => [decodeLogPath(remove.path), remove])),
    ));
}
