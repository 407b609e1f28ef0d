import type { ObjectStore } from "../../store/object-store.ts";
import { assertReadable } from "../table/reader-features.ts";
import { loadSnapshot, type LoadSnapshotOptions } from "./snapshot-loader.ts";
import { refreshSnapshot } from "./snapshot-refresh.ts";
import type { Snapshot } from "./snapshot.ts";

/**
 * The latest snapshot of a table, loaded once per store view and then advanced by reading only the
 * commits after the version held (`refreshSnapshot`: one GET when nothing changed), instead of
 * listing the log and replaying everything since the last checkpoint on every load.
 *
 * Snapshots are held per object-store view, weakly: a caller that keeps one view of a table for a
 * unit of work (the engine keeps one per table per task) shares one snapshot between its writer,
 * readers and views; a fresh view loads afresh. Reading forward is exact as long as the log is only
 * appended to, which Delta guarantees for a table's lifetime; a table deleted and created again
 * under the same view is the one case it would miss, and a view does not outlive a task.
 */
const held = new WeakMap<ObjectStore, Snapshot>();

/** The latest snapshot of the table in `store`, advanced from the one held for this view. */
export async function currentSnapshot(
  store: ObjectStore,
  options: Pick<LoadSnapshotOptions, "duck" | "location"> = {},
): Promise<Snapshot> {
  const known = held.get(store);
  if (!known) {
    const loaded = await loadSnapshot(store, options);
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
