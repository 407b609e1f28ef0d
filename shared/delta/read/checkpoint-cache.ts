import type { DuckSession } from "../../duck/duck-session.ts";
import { withScratchFolder } from "../../duck/scratch-folder.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import type { Action } from "../log/actions.ts";
import { readCheckpointActions } from "../log/checkpoint-reader.ts";
import type { CheckpointRef } from "../log/log-segment.ts";

/**
 * Decoded checkpoints, kept for the process's life (a warm Lambda's, the local runtime's). Each task
 * of an update loads the tables it touches afresh; without this every load of a checkpointed table
 * would start DuckDB to decode the same Parquet again. A checkpoint file is never rewritten in
 * place, and its identity carries the parts' ETags and sizes (one without an ETag is not kept), so
 * a table dropped and made anew (whose checkpoint has the same name) is decoded afresh.
 */
const MAX_CHECKPOINTS = 64;
const decoded = new Map<string, Promise<readonly Action[]>>();

export function checkpointActions(
  store: ObjectStore,
  checkpoint: CheckpointRef,
  duck: (work: (duck: DuckSession) => Promise<Action[]>) => Promise<Action[]>,
): Promise<readonly Action[]> {
  const decode = () =>
    duck((session) =>
      withScratchFolder((scratch) => readCheckpointActions(store, checkpoint, session, scratch)),
    );
  if (checkpoint.identity === "") return decode();
  const known = decoded.get(checkpoint.identity);
  if (known) {
    // Most recently used last: the first entry is the one to drop.
    decoded.delete(checkpoint.identity);
    decoded.set(checkpoint.identity, known);
    return known;
  }
  const reading = decode();
  decoded.set(checkpoint.identity, reading);
  reading.catch(() => decoded.delete(checkpoint.identity));
  while (decoded.size > MAX_CHECKPOINTS) decoded.delete(decoded.keys().next().value!);
  return reading;
}
