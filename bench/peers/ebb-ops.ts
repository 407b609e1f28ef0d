import { DeltaTable, forgetDecodedCheckpoints, loadSnapshot } from "../../shared/delta/index.ts";
import type { DuckSession } from "../../shared/duck/duck-session.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";

/** The peers bench's table operations (issue 38's rows), in the order it times them. */
export const PEER_OPS = [
  "snapshotV10",
  "snapshotV1000",
  "snapshotLatest",
  "timeTravelRead",
  "changeFeed",
  "vacuum",
] as const;
export type PeerOp = (typeof PEER_OPS)[number];

/** The tables the operations read: as `peers.bench.ts` builds them. */
export interface PeerTables {
  /** The table of `commits` one-row commits after version 0 (checkpoint every 10, change data feed on). */
  readonly log: string;
  readonly commits: number;
  /** The change feed's first version (its last is `commits`). */
  readonly cdfFrom: number;
  /** How many files VACUUM must delete. */
  readonly vacuumFiles: number;
}

/**
 * One Ebb call of `op`, as a CLI call or a task makes it: no checkpoint taken from the process's
 * cache (a task's first load). `vacuumRoot` is a fresh copy of the removed-files table (VACUUM
 * deletes its files).
 */
export async function ebbOp(
  op: PeerOp,
  tables: PeerTables,
  duck: DuckSession,
  vacuumRoot: string,
): Promise<void> {
  forgetDecodedCheckpoints();
  const store = new LocalObjectStore(tables.log);
  switch (op) {
    case "snapshotV10":
      await loadSnapshot(store, { version: 10 });
      return;
    case "snapshotV1000":
      await loadSnapshot(store, { version: tables.commits });
      return;
    case "snapshotLatest":
      await loadSnapshot(store);
      return;
    case "timeTravelRead":
      // As `ebb table scan --version 10` reads: that version alone, as delta-rs's `DeltaTable(path, version=10)`.
      await DeltaTable.scanAt(store, { version: 10 }, { duck });
      return;
    case "changeFeed": {
      const table = await DeltaTable.open(store, { duck });
      try {
        await table.changes(tables.cdfFrom, tables.commits);
      } finally {
        await table.close();
      }
      return;
    }
    case "vacuum": {
      const table = await DeltaTable.open(new LocalObjectStore(vacuumRoot), { duck });
      try {
        const result = await table.vacuum({ retentionHours: 0, allowShortRetention: true });
        if (result.filesToDelete.length !== tables.vacuumFiles)
          throw new Error(`Ebb vacuum deleted ${result.filesToDelete.length} files`);
      } finally {
        await table.close();
      }
    }
  }
}
