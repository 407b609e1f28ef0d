import type { Action, AddFile, Metadata, Protocol, Txn } from "../log/actions.ts";
import type { CommitRequirement } from "../commit/commit-requirements.ts";
import type { PreparedCommit } from "../commit/operation-context.ts";
import type { CheckpointSession } from "../commit/post-commit.ts";
import { commitTransaction, committedOrThrow, type Committed } from "../commit/transaction.ts";
import { RestoreFilesMissingError } from "../errors.ts";
import { removeFor } from "../commit/file-actions.ts";
import { decodeLogPath } from "../log/data-file-paths.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { assertWritable } from "../table/writer-features.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";

/**
 * RESTORE: put the table back to an earlier version with one metadata-only commit.
 *
 * 1. Plan (pure, over the current and the target snapshot): re-add every file live at the target but
 *    not now, remove every file live now but not at the target (both `dataChange: true`, PROTOCOL.md
 *    "Add File and Remove File"); restore the target's `metaData` when it differs (schema,
 *    partitioning, properties); keep the protocol unless the target needs more (a protocol is never
 *    downgraded, PROTOCOL.md "Protocol Evolution"); set every `txn` appId back to its version at the
 *    target, and to -1 for an appId the target did not have (PROTOCOL.md "Transaction Identifiers"
 *    allows the version to go down). Delta's own RESTORE leaves txns alone, which makes a replayed
 *    micro-batch look already committed and be skipped (delta-io/delta#1813); Ebb's replay needs it.
 * 2. Check, before writing anything, that Ebb can write the restored metadata and protocol, and that
 *    every file to re-add still exists (`head`): a target whose files were vacuumed fails with
 *    `RestoreFilesMissingError` naming them.
 * 3. Commit `operation: RESTORE` with Delta's metrics through the one commit path (writable check,
 *    checkpoint at the interval, log cleanup). The commit requires that nothing was added, removed
 *    or re-configured meanwhile, since the plan must see the exact live file set.
 *
 * The cost is one action and at most one `head` per differing file: it never reads data bytes.
 */

export interface RestorePlan {
  /** The version the plan was made against (the commit's read version). */
  readonly readVersion: number;
  readonly targetVersion: number;
  /** Commit timestamp of the target version. */
  readonly targetTimestamp: number;
  readonly filesToRestore: readonly AddFile[];
  readonly filesToRemove: readonly AddFile[];
  /** The target's metadata, when it differs from the current one. */
  readonly metadata?: Metadata;
  /** A protocol upgrade the target's features need, when any. */
  readonly protocol?: Protocol;
  /** `txn` actions that move each appId back to its version at the target (-1 when absent there). */
  readonly txns: readonly Txn[];
  readonly metrics: RestoreMetrics;
}

/** `operationMetrics` of a RESTORE, named as Delta reports them. */
export interface RestoreMetrics {
  readonly numRestoredFiles: number;
  readonly numRemovedFiles: number;
  readonly restoredFilesSize: number;
  readonly removedFilesSize: number;
  readonly numOfFilesAfterRestore: number;
  readonly tableSizeAfterRestore: number;
}

/** The txn version an appId absent from the restored version gets: before its first batch. */
export const TXN_VERSION_BEFORE_FIRST_BATCH = -1;

/** Plans the restore of `current` to `target` (a snapshot of the same table at an earlier version). */
export function planRestore(current: Snapshot, target: Snapshot, now: number): RestorePlan {
  const filesToRestore = [...target.files].filter(([key]) => !current.files.has(key)).map(([, add]) => add);
  const filesToRemove = [...current.files].filter(([key]) => !target.files.has(key)).map(([, add]) => add);
  const sizeOf = (files: Iterable<AddFile>) => [...files].reduce((sum, file) => sum + file.size, 0);
  const metadata = sameJson(current.metadata, target.metadata)
    ? undefined
    : { ...target.metadata, id: current.metadata.id };
  const protocol = upgradedProtocol(current.protocol, target.protocol);
  return {
    readVersion: current.version,
    targetVersion: target.version,
    targetTimestamp: target.timestamp,
    filesToRestore,
    filesToRemove,
    ...(metadata ? { metadata } : {}),
    ...(protocol ? { protocol } : {}),
    txns: restoredTxns(current, target, now),
    metrics: {
      numRestoredFiles: filesToRestore.length,
      numRemovedFiles: filesToRemove.length,
      restoredFilesSize: sizeOf(filesToRestore),
      removedFilesSize: sizeOf(filesToRemove),
      numOfFilesAfterRestore: target.files.size,
      tableSizeAfterRestore: sizeOf(target.files.values()),
    },
  };
}

/** The actions of the RESTORE commit (without `commitInfo`). */
export function restoreActions(plan: RestorePlan, now: number): Action[] {
  const actions: Action[] = [];
  if (plan.protocol) actions.push({ protocol: plan.protocol });
  if (plan.metadata) actions.push({ metaData: plan.metadata });
  for (const txn of plan.txns) actions.push({ txn });
  for (const file of plan.filesToRemove) actions.push({ remove: removeFor(file, now) });
  for (const file of plan.filesToRestore) actions.push({ add: { ...file, dataChange: true } });
  return actions;
}

export interface RestoreOptions {
  readonly clock: () => number;
  /** Extra `operationParameters`, e.g. the id of the update that rewinds the table. */
  readonly extraParameters?: Readonly<Record<string, unknown>>;
  /** The timestamp asked for, when the restore was requested by timestamp (recorded as Delta does). */
  readonly requestedTimestamp?: number;
  readonly timestampFloor?: number;
  /** Where a due checkpoint is written; a short-lived session is opened when absent. */
  readonly session?: CheckpointSession;
  /** The caller found the plan's files already, at this same snapshot: no `head` checks again. */
  readonly filesChecked?: boolean;
  /** Asked right before the commit (a writer's fence): a throw leaves the table as it was. */
  readonly beforeCommit?: () => Promise<void>;
}

/** Parallel `head` requests while checking that a restore's files still exist. */
export const HEAD_CHECK_CONCURRENCY = 32;

/** Checks the plan's files exist (unless told they were), then commits it. `current` must be the snapshot the plan read. */
export async function executeRestore(
  store: ObjectStore,
  current: Snapshot,
  plan: RestorePlan,
  options: RestoreOptions,
): Promise<Committed> {
  // The restored metadata and protocol become the table's: Ebb must be able to write them too.
  assertWritable(plan.protocol ?? current.protocol, plan.metadata ?? current.metadata);
  const missing = options.filesChecked ? [] : await findMissingFiles(store, plan.filesToRestore);
  if (missing.length > 0) throw new RestoreFilesMissingError(plan.targetVersion, missing);
  const outcome = await commitTransaction(
    store,
    {
      readSnapshot: current,
      prepared: restoreCommit(current, plan, options.clock(), options.requestedTimestamp),
      ...(options.extraParameters ? { extraParameters: options.extraParameters } : {}),
      ...(options.timestampFloor !== undefined ? { timestampFloor: options.timestampFloor } : {}),
      ...(options.beforeCommit ? { beforeCommit: options.beforeCommit } : {}),
    },
    { clock: options.clock, ...(options.session ? { session: options.session } : {}) },
  );
  return committedOrThrow(outcome);
}

/** The RESTORE commit of `plan`, which read `current`. */
function restoreCommit(
  current: Snapshot,
  plan: RestorePlan,
  now: number,
  requestedTimestamp: number | undefined,
): PreparedCommit {
  const requirements: CommitRequirement[] = [
    { kind: "metadata-unchanged" },
    { kind: "protocol-unchanged" },
    { kind: "no-restore" },
    { kind: "no-files-added" },
    { kind: "files-live", paths: new Set(current.files.keys()), removes: true },
  ];
  return {
    actions: restoreActions(plan, now),
    operation: {
      operation: "RESTORE",
      // Delta records the version or the timestamp asked for; Ebb always records the resolved
      // version too, since streaming readers skip `version + 1 .. this commit`.
      operationParameters: {
        version: plan.targetVersion,
        timestamp: requestedTimestamp === undefined ? null : new Date(requestedTimestamp).toISOString(),
      },
      operationMetrics: { ...plan.metrics },
      isBlindAppend: false,
    },
    requirements,
  };
}

/** The decoded keys of `files` that `head` does not find, checked `concurrency` at a time. */
export async function findMissingFiles(
  store: ObjectStore,
  files: readonly AddFile[],
  concurrency = HEAD_CHECK_CONCURRENCY,
): Promise<string[]> {
  const keys = files.map((file) => decodeLogPath(file.path));
  const missing: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      if ((await store.head(key)) === undefined) missing.push(key);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, keys.length) }, worker));
  return missing.sort();
}

function restoredTxns(current: Snapshot, target: Snapshot, now: number): Txn[] {
  const appIds = new Set([...current.txns.keys(), ...target.txns.keys()]);
  const txns: Txn[] = [];
  for (const appId of [...appIds].sort()) {
    const version = target.txns.get(appId)?.version ?? TXN_VERSION_BEFORE_FIRST_BATCH;
    if (current.txns.get(appId)?.version !== version) txns.push({ appId, version, lastUpdated: now });
  }
  return txns;
}

function upgradedProtocol(current: Protocol, target: Protocol): Protocol | undefined {
  const reader = Math.max(current.minReaderVersion, target.minReaderVersion);
  const writer = Math.max(current.minWriterVersion, target.minWriterVersion);
  if (reader === current.minReaderVersion && writer === current.minWriterVersion) return undefined;
  return { ...current, minReaderVersion: reader, minWriterVersion: writer };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
