import type { Action, Txn } from "../log/actions.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { commitTransaction, committedOrThrow, type Committed } from "../commit/transaction.ts";
import { draftSnapshot } from "../table/table-creation.ts";
import type { Snapshot } from "../read/snapshot.ts";

/**
 * SHALLOW CLONE: a new table whose version 0 names the files of `source` at one version, copying no
 * data (Delta's `CLONE` with `isShallow`). Ebb's clones share the source's folder (a branch's log
 * sits inside its table's folder, docs/branches.md), so the files keep the paths the source's log
 * gives them.
 *
 * 1. Version 0 holds the source's protocol, its metadata (the same table id: the branch is that
 *    table, elsewhere in time), its `txn`s as `renameTxn` maps them (dropped when it answers
 *    undefined), and an `add` for every live file (`dataChange: true`: they are the clone's rows).
 * 2. It is committed put-if-absent: a clone already made is a conflict, never overwritten.
 */

export interface CloneOptions {
  readonly clock: () => number;
  /** The clone's app id of each of the source's txn app ids; undefined drops it. */
  readonly renameTxn: (appId: string) => string | undefined;
  /** Recorded as the `source` operation parameter. */
  readonly sourceName: string;
}

export function cloneActions(source: Snapshot, options: CloneOptions, now: number): Action[] {
  const actions: Action[] = [{ protocol: source.protocol }, { metaData: source.metadata }];
  for (const txn of source.txns.values()) {
    const appId = options.renameTxn(txn.appId);
    if (appId !== undefined) actions.push({ txn: { ...txn, appId, lastUpdated: now } satisfies Txn });
  }
  for (const add of source.files.values()) actions.push({ add: { ...add, dataChange: true } });
  return actions;
}

export async function executeShallowClone(
  store: ObjectStore,
  source: Snapshot,
  options: CloneOptions,
): Promise<Committed> {
  const now = options.clock();
  const outcome = await commitTransaction(
    store,
    {
      readSnapshot: draftSnapshot(source),
      prepared: {
        actions: cloneActions(source, options, now),
        operation: {
          operation: "CLONE",
          operationParameters: {
            source: options.sourceName,
            sourceVersion: source.version,
            isShallow: true,
          },
          operationMetrics: {
            sourceTableSize: [...source.files.values()].reduce((sum, f) => sum + f.size, 0),
            sourceNumOfFiles: source.files.size,
            numRemovedFiles: 0,
            numCopiedFiles: 0,
            removedFilesSize: 0,
            copiedFilesSize: 0,
          },
          isBlindAppend: false,
        },
        requirements: [],
      },
    },
    { clock: options.clock },
  );
  return committedOrThrow(outcome);
}
