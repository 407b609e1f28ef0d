import { DuckSession, type AnswerRow, type DuckRow } from "../duck/duck-session.ts";
import { ScratchFolder } from "../duck/scratch-folder.ts";
import type { ScratchView } from "../duck/scratch-view.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import type { LastCheckpoint } from "./log/checkpoint-writer.ts";
import { prepareDelete, prepareTruncate } from "./operations/delete-operation.ts";
import type { TxnMarker } from "./commit/file-actions.ts";
import { checkpointAndCleanUp, type PostCommitResult } from "./commit/post-commit.ts";
import {
  beginTransaction,
  commitTransaction,
  compact,
  committedOrThrow,
  type Committed,
  type TxnSkipped,
} from "./commit/transaction.ts";
import { prepareMerge, type MergeSpec } from "./operations/merge-operation.ts";
import { tempTableName, type OperationContext, type PreparedCommit } from "./commit/operation-context.ts";
import { executeRestore, findMissingFiles, planRestore, type RestorePlan } from "./operations/restore.ts";
import type { RowSource } from "./write/row-source.ts";
import { openTableScan } from "./read/scan.ts";
import { changeFeedAnswerRows } from "./read/change-data-feed.ts";
import type { Snapshot } from "./read/snapshot.ts";
import { loadSnapshot } from "./read/snapshot-loader.ts";
import { refreshSnapshot } from "./read/snapshot-refresh.ts";
import {
  createTableOperation,
  creationActions,
  draftSnapshot,
  planTableCreation,
  type TableDefinition,
} from "./table/table-creation.ts";
import { LocalFileCache } from "./read/table-file-rows.ts";
import { readHistory, type HistoryEntry } from "./read/table-history.ts";
import { prepareUpdate } from "./operations/update-operation.ts";
import { dryRunVacuum, executeVacuum, type VacuumPlan } from "./operations/vacuum.ts";
import { prepareWrite } from "./operations/write-operation.ts";
import { planOptimize, type OptimizePlan } from "./operations/optimize.ts";
import { tableProperties } from "./table/table-properties.ts";
import type { StructType } from "./table/schema.ts";

/**
 * One Delta table, read and written through the object-store view of its root folder: the entry
 * point for callers. Each operation plans against the latest version (read incrementally), writes its
 * files and takes the one commit path (`commit/transaction.ts`: writable check, txn skip, commit with
 * rebase, checkpoint and log cleanup when due). A commit that conflicts is thrown here as
 * `CommitConflictError`: a caller of this handle redoes the whole operation.
 */
export interface DeltaTableOptions {
  /** Time source for commit timestamps and file times. Default `Date.now`. */
  readonly clock?: () => number;
  /** A DuckDB session to work in (e.g. the engine's, so SQL sources can name its relations). */
  readonly duck?: DuckSession;
  /** Size at which a write starts a new data file. @default 128 MiB */
  readonly targetFileSizeBytes?: number;
  /**
   * A snapshot of this table the caller already loaded, so `open` need not load it again. It may be
   * stale: every operation refreshes to the latest version first.
   */
  readonly snapshot?: Snapshot;
}

export interface WriteOptions {
  /** Idempotent write: skipped when the table already holds this appId at this version or later. */
  readonly txn?: TxnMarker;
  /** Lowest acceptable commit timestamp (e.g. the newest upstream commit consumed + 1 ms). */
  readonly timestampFloor?: number;
  /** Extra `operationParameters` (e.g. the input versions a materialized view was computed from). */
  readonly extraParameters?: Readonly<Record<string, unknown>>;
  /** Asked right before the commit (a writer's fence): a throw leaves the table as it was. */
  readonly beforeCommit?: () => Promise<void>;
}

/** A write's outcome: committed (with what followed the commit), or skipped by its txn marker. */
export type WriteResult = CommittedWrite | Omit<TxnSkipped, "snapshot">;

export interface CommittedWrite extends PostCommitResult {
  readonly status: "committed";
  readonly version: number;
  readonly timestamp: number;
  readonly operationMetrics: Readonly<Record<string, number>>;
  /** The version of the OPTIMIZE that auto-compaction committed right after this write. */
  readonly autoCompactedVersion?: number;
}

export interface UpdateSpec {
  /** Column → DuckDB SQL expression over the row's current values. */
  readonly set: Readonly<Record<string, string>>;
  /** DuckDB SQL predicate; all rows when absent. */
  readonly where?: string;
}

export type TimeTravel = { readonly version: number } | { readonly timestamp: number };

export interface RestoreRequest {
  readonly to: TimeTravel;
  /** Extra `operationParameters` (e.g. the rewinding update's id). */
  readonly extraParameters?: Readonly<Record<string, unknown>>;
  readonly timestampFloor?: number;
}

export interface VacuumRequest {
  /** Default: the table's `delta.deletedFileRetentionDuration` (168 hours unless set). */
  readonly retentionHours?: number;
  readonly allowShortRetention?: boolean;
  /** Versions whose files must be kept whatever their age (live rewind points). */
  readonly protectedVersions?: readonly number[];
  /** Snapshots of other logs naming this folder's files (a branch's), kept whatever their age. */
  readonly protectedSnapshots?: readonly Snapshot[];
  readonly dryRun?: boolean;
}

export interface OptimizeRequest {
  /** Default: the table's `delta.targetFileSize` (128 MiB unless set). */
  readonly targetFileSizeBytes?: number;
  readonly dryRun?: boolean;
}

/** An OPTIMIZE's plan, and its commit when it wrote one (nothing to compact writes nothing). */
export interface OptimizeResult {
  readonly plan: OptimizePlan;
  readonly committed?: CommittedWrite;
}

export class DeltaTable {
  #latest: Snapshot;

  private constructor(
    readonly store: ObjectStore,
    latest: Snapshot,
    private readonly context: OperationContext,
    private readonly ownsSession: boolean,
  ) {
    this.#latest = latest;
  }

  /** Creates the table (version 0), optionally with its first rows in the same commit. */
  static async create(
    store: ObjectStore,
    definition: TableDefinition & { readonly rows?: RowSource },
    options: DeltaTableOptions = {},
  ): Promise<DeltaTable> {
    const clock = options.clock ?? Date.now;
    const created = planTableCreation(definition, clock());
    const table = await DeltaTable.#withContext(store, draftSnapshot(created), options);
    try {
      const draft = draftSnapshot(created);
      const prepared: PreparedCommit = definition.rows
        ? await prepareWrite(table.context, draft, definition.rows, "append")
        : { actions: [], operation: createTableOperation(definition, created.metadata), requirements: [] };
      const operation = definition.rows
        ? {
            ...prepared.operation,
            operationParameters: { ...prepared.operation.operationParameters, mode: "ErrorIfExists" },
          }
        : prepared.operation;
      const committed = committedOrThrow(
        await commitTransaction(
          store,
          {
            readSnapshot: draft,
            prepared: {
              ...prepared,
              actions: [...creationActions(created), ...prepared.actions],
              operation,
              requirements: [],
            },
          },
          { clock, session: table.context },
        ),
      );
      table.#latest = committed.snapshot;
      return table;
    } catch (error) {
      await table.close();
      throw error;
    }
  }

  /** Opens the table at its latest version. */
  static async open(store: ObjectStore, options: DeltaTableOptions = {}): Promise<DeltaTable> {
    const duck = options.duck ?? DuckSession.deferred();
    try {
      const latest = options.snapshot ?? (await loadSnapshot(store));
      return await DeltaTable.#withContext(store, latest, { ...options, duck }, options.duck === undefined);
    } catch (error) {
      if (!options.duck) duck.close();
      throw error;
    }
  }

  static async #withContext(
    store: ObjectStore,
    latest: Snapshot,
    options: DeltaTableOptions,
    ownsSession = options.duck === undefined,
  ): Promise<DeltaTable> {
    const duck = options.duck ?? DuckSession.deferred();
    const scratch = ScratchFolder.deferred("ebb-delta-");
    const context: OperationContext = {
      store,
      duck,
      scratch,
      clock: options.clock ?? Date.now,
      files: new LocalFileCache(store, scratch),
      ...(options.targetFileSizeBytes !== undefined
        ? { targetFileSizeBytes: options.targetFileSizeBytes }
        : {}),
    };
    return new DeltaTable(store, latest, context, ownsSession);
  }

  /** The latest snapshot this handle has seen (no I/O). */
  get snapshot(): Snapshot {
    return this.#latest;
  }

  /** Reads commits made since the last known version. */
  async refresh(): Promise<Snapshot> {
    this.#latest = await refreshSnapshot(this.store, this.#latest);
    return this.#latest;
  }

  /** The snapshot at a version or timestamp (time travel). */
  snapshotAt(at: TimeTravel): Promise<Snapshot> {
    return loadSnapshot(this.store, at);
  }

  append(rows: RowSource, options: WriteOptions = {}): Promise<WriteResult> {
    return this.#write((context, snapshot) => prepareWrite(context, snapshot, rows, "append"), options);
  }

  /** With `overwriteSchema`, the table takes that schema when its columns or types differ (Delta's option). */
  overwrite(
    rows: RowSource,
    options: WriteOptions & { readonly overwriteSchema?: StructType } = {},
  ): Promise<WriteResult> {
    return this.#write(
      (context, snapshot) => prepareWrite(context, snapshot, rows, "overwrite", options.overwriteSchema),
      options,
    );
  }

  /** Deletes the rows matching `where` (a DuckDB SQL predicate), or every row. */
  delete(where?: string, options: WriteOptions = {}): Promise<WriteResult> {
    return this.#write((context, snapshot) => prepareDelete(context, snapshot, where), options);
  }

  update(spec: UpdateSpec, options: WriteOptions = {}): Promise<WriteResult> {
    return this.#write(
      (context, snapshot) => prepareUpdate(context, snapshot, spec.set, spec.where),
      options,
    );
  }

  merge(spec: MergeSpec, options: WriteOptions = {}): Promise<WriteResult> {
    return this.#write((context, snapshot) => prepareMerge(context, snapshot, spec), options);
  }

  /** Plans a RESTORE and lists the target's files that are gone, without writing anything (a dry run). */
  async planRestore(to: TimeTravel): Promise<{ plan: RestorePlan; missingFiles: string[] }> {
    const current = await this.refresh();
    const target = await this.snapshotAt(to);
    const plan = planRestore(current, target, this.context.clock());
    return { plan, missingFiles: await findMissingFiles(this.store, plan.filesToRestore) };
  }

  /** RESTORE to an earlier version or timestamp: one metadata-only commit. */
  async restore(request: RestoreRequest): Promise<CommittedWrite & { readonly plan: RestorePlan }> {
    const current = await this.refresh();
    beginTransaction(current, undefined);
    const target = await this.snapshotAt(request.to);
    const plan = planRestore(current, target, this.context.clock());
    const committed = await executeRestore(this.store, current, plan, {
      clock: this.context.clock,
      ...(request.extraParameters ? { extraParameters: request.extraParameters } : {}),
      ...("timestamp" in request.to ? { requestedTimestamp: request.to.timestamp } : {}),
      ...(request.timestampFloor !== undefined ? { timestampFloor: request.timestampFloor } : {}),
      session: this.context,
    });
    return { ...this.#committed(committed, { ...plan.metrics }), plan };
  }

  /** VACUUM (a dry run returns the plan and deletes nothing). */
  async vacuum(request: VacuumRequest = {}): Promise<VacuumPlan & { readonly deleted: boolean }> {
    const latest = await this.refresh();
    const protectedSnapshots = [
      ...(await Promise.all(
        (request.protectedVersions ?? []).map((version) => this.snapshotAt({ version })),
      )),
      ...(request.protectedSnapshots ?? []),
    ];
    const plan = await dryRunVacuum(this.store, latest, protectedSnapshots, {
      now: this.context.clock(),
      ...(request.retentionHours !== undefined ? { retentionMs: request.retentionHours * 3_600_000 } : {}),
      ...(request.allowShortRetention !== undefined
        ? { allowShortRetention: request.allowShortRetention }
        : {}),
    });
    if (request.dryRun) return { ...plan, deleted: false };
    await executeVacuum(this.store, plan);
    return { ...plan, deleted: true };
  }

  /**
   * OPTIMIZE: bin-packs the small files of each partition into files of the target size, in one
   * `dataChange: false` commit (streaming readers skip it). A conflict is thrown, like any write.
   */
  async optimize(request: OptimizeRequest = {}): Promise<OptimizeResult> {
    const snapshot = await this.refresh();
    beginTransaction(snapshot, undefined);
    const plan = planOptimize(snapshot, {
      targetFileSizeBytes:
        request.targetFileSizeBytes ?? tableProperties(snapshot.metadata).targetFileSizeBytes,
    });
    if (request.dryRun || plan.bins.length === 0) return { plan };
    const outcome = committedOrThrow(
      await compact(this.store, snapshot, plan, { clock: this.context.clock, session: this.context }),
    );
    return { plan, committed: this.#committed(outcome, readMetrics(outcome)) };
  }

  history(options: { readonly limit?: number } = {}): Promise<HistoryEntry[]> {
    return readHistory(this.store, options);
  }

  /** Every row of the latest (or a past) version. */
  scan(at?: TimeTravel): Promise<DuckRow[]> {
    return this.#scan(at, (view) => view.rows());
  }

  /** Every row of the latest (or a past) version, as a user reads them (exact decimals and times). */
  scanAnswers(at?: TimeTravel): Promise<AnswerRow[]> {
    return this.#scan(at, (view) => view.answerRows());
  }

  async #scan<R>(at: TimeTravel | undefined, read: (view: ScratchView) => Promise<R>): Promise<R> {
    const snapshot = at ? await this.snapshotAt(at) : await this.refresh();
    return readSnapshot(this.store, snapshot, this.context.duck, read);
  }

  /**
   * Every row of the table in `store` as of `at` (default latest), loading that version alone: a
   * time-travel read without a handle, which `open` would first load at the latest version for.
   */
  static async scanAt(
    store: ObjectStore,
    at?: TimeTravel,
    options: { duck?: DuckSession } = {},
  ): Promise<DuckRow[]> {
    return readSnapshot(store, await loadSnapshot(store, { ...at }), options.duck, (view) => view.rows());
  }

  /** `scanAt`, as a user reads the rows (exact decimals and times). */
  static async scanAnswersAt(
    store: ObjectStore,
    at?: TimeTravel,
    options: { duck?: DuckSession } = {},
  ): Promise<AnswerRow[]> {
    return readSnapshot(store, await loadSnapshot(store, { ...at }), options.duck, (view) =>
      view.answerRows(),
    );
  }

  /**
   * The change data feed of versions `from` to `to` (default latest): the table's columns plus
   * `_change_type`, `_commit_version`, `_commit_timestamp`; as a user reads them (exact decimals).
   */
  async changes(from: number, to?: number): Promise<AnswerRow[]> {
    return changeFeedAnswerRows(this.store, from, to, this.context.duck, { known: this.snapshot });
  }

  /** TRUNCATE: removes every live file in one commit (allowed on an append-only table). */
  truncate(options: WriteOptions = {}): Promise<WriteResult> {
    return this.#write(
      (context, snapshot) => Promise.resolve(prepareTruncate(snapshot, context.clock())),
      options,
    );
  }

  /** Writes a checkpoint of the latest version now, whatever the interval (then cleans up expired log entries). */
  async checkpoint(): Promise<LastCheckpoint> {
    const snapshot = await this.refresh();
    return (await checkpointAndCleanUp(this.store, this.context, snapshot, this.context.clock())).checkpoint;
  }

  async close(): Promise<void> {
    try {
      if (this.ownsSession) this.context.duck.close();
    } finally {
      await this.context.scratch.dispose();
    }
  }

  async #write(
    prepare: (context: OperationContext, snapshot: Snapshot) => Promise<PreparedCommit>,
    options: WriteOptions,
  ): Promise<WriteResult> {
    const snapshot = await this.refresh();
    const skipped = beginTransaction(snapshot, options.txn);
    if (skipped) return withoutSnapshot(skipped);
    const prepared = await prepare(this.context, snapshot);
    const outcome = await commitTransaction(
      this.store,
      {
        readSnapshot: snapshot,
        prepared,
        ...(options.txn ? { txn: options.txn } : {}),
        ...(options.timestampFloor !== undefined ? { timestampFloor: options.timestampFloor } : {}),
        ...(options.extraParameters ? { extraParameters: options.extraParameters } : {}),
        ...(options.beforeCommit ? { beforeCommit: options.beforeCommit } : {}),
      },
      { clock: this.context.clock, session: this.context },
    );
    switch (outcome.status) {
      case "committed":
        return this.#committed(outcome, prepared.operation.operationMetrics ?? {});
      case "txn-skipped":
        this.#see(outcome.snapshot);
        return withoutSnapshot(outcome);
      case "conflict":
        throw outcome.error;
    }
  }

  #committed(committed: Committed, operationMetrics: Readonly<Record<string, number>>): CommittedWrite {
    this.#see(committed.autoCompaction?.snapshot ?? committed.snapshot);
    const { checkpoint, checkpointError, logCleanup } = committed;
    return {
      status: "committed",
      version: committed.version,
      timestamp: committed.timestamp,
      operationMetrics,
      ...(checkpoint ? { checkpoint } : {}),
      ...(checkpointError !== undefined ? { checkpointError } : {}),
      ...(logCleanup ? { logCleanup } : {}),
      ...(committed.autoCompaction ? { autoCompactedVersion: committed.autoCompaction.version } : {}),
    };
  }

  #see(snapshot: Snapshot): void {
    if (snapshot.version > this.#latest.version) this.#latest = snapshot;
  }
}

function readMetrics(committed: Committed): Record<string, number> {
  const metrics = committed.snapshot.commitInfo?.operationMetrics ?? {};
  return Object.fromEntries(Object.entries(metrics).map(([key, value]) => [key, Number(value)]));
}

function withoutSnapshot({ snapshot: _snapshot, ...skipped }: TxnSkipped): Omit<TxnSkipped, "snapshot"> {
  return skipped;
}

/** `read` over the rows of `snapshot`, as a view dropped afterwards. */
async function readSnapshot<R>(
  store: ObjectStore,
  snapshot: Snapshot,
  duck: DuckSession | undefined,
  read: (view: ScratchView) => Promise<R>,
): Promise<R> {
  const view = await openTableScan(store, snapshot, {
    ...(duck ? { duck } : {}),
    viewName: tempTableName("scan"),
  });
  try {
    return await read(view);
  } finally {
    await view.close();
  }
}
