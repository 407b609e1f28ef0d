import { withDuckSession } from "../../duck/duck-session.ts";
import { withScratchFolder } from "../../duck/scratch-folder.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { prepareOptimize, type OptimizePlan } from "../operations/optimize.ts";
import { LocalFileCache } from "../read/table-file-rows.ts";
import { dueAutoCompaction } from "./auto-compaction.ts";
import { decodeLogPath } from "../log/data-file-paths.ts";
import type { OperationDescription } from "./commit-info.ts";
import { commit, type CommitConflict, type CommittedVersion } from "./commit.ts";
import { txnFor, type TxnMarker } from "./file-actions.ts";
import type { PreparedCommit } from "./operation-context.ts";
import { postCommit, type CheckpointSession, type PostCommitResult } from "./post-commit.ts";
import { rememberSnapshot } from "../read/snapshot-cache.ts";
import { refreshSnapshot } from "../read/snapshot-refresh.ts";
import type { Snapshot } from "../read/snapshot.ts";
import { assertWritable } from "../table/writer-features.ts";

/**
 * The one commit path every writer takes (delta-rs's `CommitBuilder → PreparedCommit → PostCommit`):
 *
 * 1. Begin, before any data file is written (`beginTransaction`): a `txn` the table already holds
 *    at this version or later is `txn-skipped` (PROTOCOL.md "Transaction Identifiers"); otherwise
 *    the table must use no feature this writer would break (checked again at commit, so a writer
 *    that skips this step still gets it).
 * 2. Commit (`commitTransaction`): the prepared actions, after the `txn` action when there is one,
 *    required not to race another commit of the same appId; put-if-absent, the pure conflict check
 *    and the rebase are `commit.ts`. A conflict over the appId that leaves the table holding this
 *    txn is the same batch landing twice (a retried task racing itself): `txn-skipped`, not a
 *    conflict. Any other conflict is the `conflict` value; nothing of the commit is in the log.
 * 3. Post-commit (`post-commit.ts`): a checkpoint at the interval, then expired-log cleanup.
 * 4. Auto-compaction (`auto-compaction.ts`), when the table asks for it and small files are due: an
 *    OPTIMIZE commit of its own through steps 2 and 3. The write stands whatever it does; a
 *    compaction that loses a race or fails is reported, and the next write tries again.
 */

export interface Committed extends CommittedVersion, PostCommitResult {
  /** The OPTIMIZE commit that followed this one (auto-compaction). */
  readonly autoCompaction?: Committed;
  /** An auto-compaction that conflicted or failed; this commit stands. */
  readonly autoCompactionError?: unknown;
}

/** The table already holds the txn marker: the batch was committed before, nothing was written. */
export interface TxnSkipped {
  readonly status: "txn-skipped";
  readonly appId: string;
  readonly requestedVersion: number;
  readonly tableVersion: number;
  /** The snapshot that holds it. */
  readonly snapshot: Snapshot;
}

export type TransactionOutcome = Committed | TxnSkipped | CommitConflict;

export interface TransactionRequest {
  /** The snapshot the operation planned against (a draft one when creating the table). */
  readonly readSnapshot: Snapshot;
  readonly prepared: PreparedCommit;
  /** Idempotent write: skipped when the table already holds this appId at this version or later. */
  readonly txn?: TxnMarker;
  /** Lowest acceptable commit timestamp (e.g. newest upstream commit consumed + 1 ms). */
  readonly timestampFloor?: number;
  /** Extra `operationParameters` (e.g. the id of the update that wrote it). */
  readonly extraParameters?: Readonly<Record<string, unknown>>;
  /** Asked right before the commit (a writer's fence): a throw leaves the table as it was. */
  readonly beforeCommit?: () => Promise<void>;
}

export interface TransactionOptions {
  readonly clock: () => number;
  /** Where a due checkpoint is written; a short-lived session is opened when absent. */
  readonly session?: CheckpointSession;
}

/** Step 1: a txn the table holds already is `txn-skipped`; a table this writer cannot write is refused. */
export function beginTransaction(snapshot: Snapshot, txn: TxnMarker | undefined): TxnSkipped | undefined {
  const skipped = txn ? heldTxn(snapshot, txn) : undefined;
  if (!skipped) assertWritable(snapshot.protocol, snapshot.metadata);
  return skipped;
}

/** Steps 2 and 3: commits `request.prepared` as the next version, then checkpoints when due. */
export function commitTransaction(
  store: ObjectStore,
  request: TransactionRequest & { readonly txn?: undefined },
  options: TransactionOptions,
): Promise<Committed | CommitConflict>;
export function commitTransaction(
  store: ObjectStore,
  request: TransactionRequest,
  options: TransactionOptions,
): Promise<TransactionOutcome>;
export async function commitTransaction(
  store: ObjectStore,
  request: TransactionRequest,
  options: TransactionOptions,
): Promise<TransactionOutcome> {
  const { readSnapshot, prepared, txn } = request;
  assertWritable(readSnapshot.protocol, readSnapshot.metadata);
  await request.beforeCommit?.();
  const result = await commit(
    store,
    {
      readSnapshot,
      actions: txn ? [{ txn: txnFor(txn, options.clock()) }, ...prepared.actions] : prepared.actions,
      operation: withParameters(prepared.operation, request.extraParameters),
      requirements: txn
        ? [...prepared.requirements, { kind: "txn-unchanged", appId: txn.appId }]
        : prepared.requirements,
      ...(request.timestampFloor !== undefined ? { timestampFloor: request.timestampFloor } : {}),
    },
    { clock: options.clock },
  );
  if (result.status === "conflict") {
    if (txn && result.error.kind === "concurrent-transaction") {
      const skipped = heldTxn(await refreshSnapshot(store, readSnapshot), txn);
      if (skipped) return skipped;
    }
    return result;
  }
  rememberSnapshot(store, result.snapshot);
  const committed = {
    ...result,
    ...(await postCommit(store, result.snapshot, options.clock(), options.session)),
  };
  const added = new Set(
    prepared.actions.flatMap((action) =>
      "add" in action && action.add ? [decodeLogPath(action.add.path)] : [],
    ),
  );
  const due = dueAutoCompaction(result.snapshot, prepared.operation, added);
  if (!due) return committed;
  try {
    const compaction = await compact(store, result.snapshot, due, options);
    if (compaction.status === "conflict") return { ...committed, autoCompactionError: compaction.error };
    return { ...committed, autoCompaction: compaction };
  } catch (autoCompactionError) {
    return { ...committed, autoCompactionError };
  }
}

/** Writes and commits an OPTIMIZE of `snapshot` (step 4, and the OPTIMIZE operation itself). */
export async function compact(
  store: ObjectStore,
  snapshot: Snapshot,
  plan: OptimizePlan,
  options: TransactionOptions,
): Promise<Committed | CommitConflict> {
  const run = async (session: CheckpointSession) => {
    const context = {
      store,
      ...session,
      clock: options.clock,
      files: new LocalFileCache(store, session.scratch),
    };
    const prepared = await prepareOptimize(context, snapshot, plan);
    return commitTransaction(store, { readSnapshot: snapshot, prepared }, { clock: options.clock, session });
  };
  return options.session
    ? run(options.session)
    : withDuckSession((duck) => withScratchFolder((scratch) => run({ duck, scratch })));
}

/** The committed outcome, or the conflict thrown (for writers whose callers retry the whole operation). */
export function committedOrThrow<T extends TransactionOutcome>(outcome: T): Exclude<T, CommitConflict> {
  if (outcome.status === "conflict") throw outcome.error;
  return outcome as Exclude<T, CommitConflict>;
}

function heldTxn(snapshot: Snapshot, txn: TxnMarker): TxnSkipped | undefined {
  const tableVersion = snapshot.txns.get(txn.appId)?.version;
  if (tableVersion === undefined || tableVersion < txn.version) return undefined;
  return { status: "txn-skipped", appId: txn.appId, requestedVersion: txn.version, tableVersion, snapshot };
}

function withParameters(
  operation: OperationDescription,
  extra: Readonly<Record<string, unknown>> | undefined,
): OperationDescription {
  if (!extra) return operation;
  return { ...operation, operationParameters: { ...operation.operationParameters, ...extra } };
}
