import type { DuckSession } from "../duck/duck-session.ts";
import type { ScratchFolder } from "../duck/scratch-folder.ts";
import { quoteIdentifier } from "../duck/sql-text.ts";
import {
  beginTransaction,
  commitTimestampAt,
  commitTransaction,
  DeltaTable,
  assertWritableColumnNames,
  findCommitInfo,
  currentSnapshot,
  LocalFileCache,
  parseSchema,
  serializeSchema,
  type OperationContext,
  type RowSource,
  type PreparedCommit,
  prepareMerge,
  prepareWrite,
  readCommit,
  recordCount,
  removeFor,
  standardRequirements,
  type AddFile,
  type Snapshot,
  type StructType,
  TableAlreadyExistsError,
  TableNotFoundError,
  type TxnMarker,
  type WriteOptions,
} from "../delta/index.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { IncompatibleSchemaChangeError, TableWriteConflictError } from "./errors.ts";
import { schemaOfColumns } from "./output-schema.ts";
import { planSchemaEvolution } from "./schema-evolution.ts";

/**
 * The idempotent sink of the micro-batch protocol (architecture.md "Streaming", steps 3 and 4): the
 * batch's rows are written as data files, then committed with `txn {appId, version: seq}`. A batch
 * whose seq the table already holds is not written again; its commit is looked up instead. Writing and
 * committing are separate steps (unlike `DeltaTable.append`) so a crash can fall between them; the
 * commit takes the Delta layer's one commit path (txn skip, rebase, checkpoint, log cleanup).
 */

export interface SinkTarget {
  /** The table, through the object-store view of its root folder. */
  readonly store: ObjectStore;
  /** The table's name, for its metadata and messages. */
  readonly name: string;
  readonly partitionBy?: readonly string[];
  readonly properties?: Readonly<Record<string, string>>;
}

export interface SinkSession {
  /** The engine's own (unsandboxed) DuckDB session. */
  readonly duck: DuckSession;
  readonly scratch: ScratchFolder;
  readonly clock: () => number;
  /** Aborted when the update is stopped: user SQL running in a sandbox is interrupted. */
  readonly signal?: AbortSignal | undefined;
}

export interface BatchCommit {
  readonly version: number;
  readonly timestamp: number;
  /** The table held this txn already (a retried batch): nothing was written. */
  readonly alreadyCommitted: boolean;
  /** Rows the batch's commit added (`operationMetrics.numOutputRows`). */
  readonly rows: number;
  /** Bytes of the data files the commit added (`operationMetrics.numOutputBytes` of one committed already). */
  readonly bytes: number;
}

/** Where a batch's rows SQL runs and its data files are staged, when not the engine session. */
export interface RowsSession {
  readonly duck: DuckSession;
  readonly scratch: ScratchFolder;
}

/** The latest snapshot, creating the table from the rows' schema when it does not exist yet. */
export async function openOrCreateTable(
  target: SinkTarget,
  session: SinkSession,
  rowsSql: string,
  rowsSession: RowsSession = session,
): Promise<Snapshot> {
  return openOrCreateWith(target, session, () => rowsSchema(target, describedOnce(rowsSession, rowsSql)));
}

/** The latest snapshot, creating the table with `schemaOf()` when it does not exist yet. */
export async function openOrCreateWith(
  target: SinkTarget,
  session: SinkSession,
  schemaOf: () => Promise<StructType>,
): Promise<Snapshot> {
  try {
    return await currentSnapshot(target.store);
  } catch (error) {
    if (!(error instanceof TableNotFoundError)) throw error;
  }
  const schema = await schemaOf();
  const table = await DeltaTable.create(
    target.store,
    {
      schema,
      name: target.name,
      ...(target.partitionBy ? { partitionColumns: target.partitionBy } : {}),
      ...(target.properties ? { properties: target.properties } : {}),
    },
    { clock: session.clock, duck: session.duck },
  ).catch(async (error: unknown) => {
    // Another writer created it first (two flows of one table): use theirs.
    if (error instanceof TableAlreadyExistsError) return undefined;
    throw error;
  });
  if (table) {
    const snapshot = table.snapshot;
    await table.close();
    return snapshot;
  }
  return currentSnapshot(target.store);
}

/** A column of a rows SQL, as DuckDB's DESCRIBE gives it. */
export interface DescribedColumn {
  readonly name: string;
  readonly duckType: string;
}

/** The columns a batch's rows SQL gives, as DuckDB describes them. */
type DescribedColumns = () => Promise<readonly DescribedColumn[]>;

/**
 * The rows SQL's DESCRIBE, asked at most once: the table's schema (create, evolve, overwrite) and
 * the staging of the rows (`RowSource.columns`) both need it, and each DESCRIBE binds the whole query.
 */
function describedOnce(rowsSession: RowsSession, rowsSql: string): DescribedColumns {
  let described: ReturnType<DescribedColumns> | undefined;
  return () =>
    (described ??= rowsSession.duck
      .rows(`DESCRIBE (${rowsSql})`)
      .then((rows) =>
        rows.map((row) => ({ name: String(row["column_name"]), duckType: String(row["column_type"]) })),
      ));
}

/** The rows' source for the writer, with the column names already described. */
async function describedSource(rowsSql: string, described: DescribedColumns): Promise<RowSource> {
  return { sql: rowsSql, columns: (await described()).map((column) => column.name) };
}

async function rowsSchema(target: SinkTarget, described: DescribedColumns): Promise<StructType> {
  const schema = schemaOfColumns(await described(), `table ${target.name}`);
  assertWritableColumnNames(schema.fields, target.name);
  return schema;
}

/**
 * The snapshot to write the rows against, and the metadata change to commit with them: a query that
 * adds columns evolves the table (schema-evolution.ts); one that drops or narrows a column is refused.
 */
async function evolveFor(
  target: SinkTarget,
  snapshot: Snapshot,
  schemaOf: () => Promise<StructType>,
): Promise<{ snapshot: Snapshot; metaData?: Snapshot["metadata"] }> {
  const empty = snapshot.files.size === 0;
  const evolution = planSchemaEvolution(parseSchema(snapshot.metadata.schemaString), await schemaOf(), empty);
  if (evolution.kind === "unchanged") return { snapshot };
  if (evolution.kind === "incompatible")
    throw new IncompatibleSchemaChangeError(target.name, evolution.problems);
  const metaData = { ...snapshot.metadata, schemaString: serializeSchema(evolution.schema) };
  return { snapshot: { ...snapshot, metadata: metaData }, metaData };
}

/** What a batch commit may do besides writing: a stamp floor, a crash hook, where its rows live. */
export interface BatchOptions {
  readonly timestampFloor?: number;
  readonly afterDataFiles?: () => Promise<void>;
  /** Runs after each data file is uploaded, while the rest are still being written (crash injection). */
  readonly afterDataFile?: () => Promise<void>;
  /** Runs the rows SQL and stages the data files there (e.g. a sandbox); the engine session otherwise. */
  readonly rowsSession?: RowsSession;
}

/**
 * Appends `rowsSql` (a SELECT in the engine session) with `txn`, unless the table already holds it.
 * `afterDataFiles` runs between writing the data files and committing them (crash injection).
 */
export async function appendBatch(
  target: SinkTarget,
  session: SinkSession,
  rowsSql: string,
  txn: TxnMarker,
  options: BatchOptions = {},
): Promise<BatchCommit> {
  const described = describedOnce(options.rowsSession ?? session, rowsSql);
  return commitBatch(target, session, () => rowsSchema(target, described), txn, options, {
    prepare: async (context, snapshot) =>
      asStreamingUpdate(
        await prepareWrite(context, snapshot, await describedSource(rowsSql, described), "append"),
        txn,
      ),
    rows: (metrics) => Number(metrics?.["numOutputRows"] ?? 0),
  });
}

/**
 * A batch's append as Spark's streaming sink records it, so DESCRIBE HISTORY reads as on Databricks:
 * `STREAMING UPDATE`, the output mode, the query (the flow's txn appId) and the epoch (the batch's seq).
 */
function asStreamingUpdate(prepared: PreparedCommit, txn: TxnMarker): PreparedCommit {
  const metrics = prepared.operation.operationMetrics ?? {};
  return {
    ...prepared,
    operation: {
      operation: "STREAMING UPDATE",
      operationParameters: { outputMode: "Append", queryId: txn.appId, epochId: String(txn.version) },
      operationMetrics: {
        numAddedFiles: metrics["numFiles"] ?? 0,
        numRemovedFiles: 0,
        numOutputRows: metrics["numOutputRows"] ?? 0,
        numOutputBytes: metrics["numOutputBytes"] ?? 0,
      },
      isBlindAppend: true,
    },
  };
}

/** Data files another engine wrote into the table's folder (a Spark batch's manifest), to commit. */
export interface StagedFiles {
  /** The rows' schema (creates and evolves the table as a DuckDB batch's rows would). */
  readonly schema: StructType;
  /** The files, their paths relative to the table root, with exact stats. */
  readonly adds: readonly AddFile[];
}

/**
 * Appends `staged` files with `txn`, unless the table already holds it: the same commit as
 * `appendBatch`'s (txn check, schema evolution, STREAMING UPDATE), only the files were written elsewhere.
 */
export async function appendStagedFiles(
  target: SinkTarget,
  session: SinkSession,
  staged: StagedFiles,
  txn: TxnMarker,
  options: Pick<BatchOptions, "timestampFloor" | "afterDataFiles"> = {},
): Promise<BatchCommit> {
  const rows = staged.adds.reduce((sum, add) => sum + recordCount(add), 0);
  const bytes = staged.adds.reduce((sum, add) => sum + add.size, 0);
  return commitBatch(target, session, async () => staged.schema, txn, options, {
    prepare: async () =>
      asStreamingUpdate(
        {
          actions: staged.adds.map((add) => ({ add })),
          operation: {
            operation: "WRITE",
            operationParameters: { mode: "Append", partitionBy: JSON.stringify(target.partitionBy ?? []) },
            operationMetrics: { numFiles: staged.adds.length, numOutputRows: rows, numOutputBytes: bytes },
            isBlindAppend: true,
          },
          requirements: standardRequirements({}),
        },
        txn,
      ),
    rows: (metrics) => Number(metrics?.["numOutputRows"] ?? 0),
  });
}

/** A MERGE another engine computed (a Spark job's AUTO CDC apply): its files, and the files it read. */
export interface StagedMerge extends StagedFiles {
  /** Every live file the job read (paths as the log names them): the table must hold exactly these. */
  readonly read: readonly string[];
  /** The files it rewrote (a subset of `read`). */
  readonly removes: readonly string[];
  /** The columns rows were matched on, and the source's delete mark (for the history). */
  readonly on: readonly string[];
  readonly deleteMark: string;
  /** Its change-data files (paths as the log names them). */
  readonly changeData: readonly { readonly path: string; readonly size: number }[];
  readonly metrics: {
    readonly inserted: number;
    readonly updated: number;
    readonly deleted: number;
    readonly copied: number;
  };
}

/**
 * Commits a MERGE another engine computed with `txn`, unless the table already holds it: the same
 * commit as `mergeBatch`'s (txn check, schema evolution, MERGE in the history), only the files were
 * written elsewhere. The job read the table as Ebb listed it; a table that changed since (a file
 * added or removed) is a conflict, and the batch runs again.
 */
export async function commitStagedMerge(
  target: SinkTarget,
  session: SinkSession,
  staged: StagedMerge,
  txn: TxnMarker,
  options: Pick<BatchOptions, "timestampFloor" | "afterDataFiles"> = {},
): Promise<BatchCommit> {
  const bytes = staged.adds.reduce((sum, add) => sum + add.size, 0);
  const { inserted, updated, deleted, copied } = staged.metrics;
  const mark = `source.${quoteIdentifier(staged.deleteMark)}`;
  return commitBatch(target, session, async () => staged.schema, txn, options, {
    prepare: async (_context, snapshot) => {
      const live = [...snapshot.files.keys()];
      if (live.length !== staged.read.length || !staged.read.every((path) => snapshot.files.has(path)))
        throw new TableWriteConflictError(
          target.name,
          new Error("its files changed while a Spark job applied the batch's changes"),
        );
      const now = session.clock();
      return {
        actions: [
          ...staged.removes.map((path) => ({ remove: removeFor(snapshot.files.get(path)!, now) })),
          ...staged.adds.map((add) => ({ add })),
          ...staged.changeData.map((file) => ({
            cdc: { path: file.path, partitionValues: {}, size: file.size, dataChange: false },
          })),
        ],
        operation: {
          operation: "MERGE",
          // As `mergeBatch`'s MERGE records them.
          operationParameters: {
            predicate: JSON.stringify([staged.on.map((k) => `target.${k} = source.${k}`).join(" AND ")]),
            matchedPredicates: JSON.stringify([
              { actionType: "delete", predicate: mark },
              { actionType: "update" },
            ]),
            notMatchedPredicates: JSON.stringify([{ actionType: "insert", predicate: `NOT ${mark}` }]),
          },
          operationMetrics: {
            numTargetRowsInserted: inserted,
            numTargetRowsUpdated: updated,
            numTargetRowsDeleted: deleted,
            numTargetRowsCopied: copied,
            numOutputRows: inserted + updated + copied,
            numOutputBytes: bytes,
            numTargetFilesAdded: staged.adds.length,
            numTargetFilesRemoved: staged.removes.length,
            numTargetChangeFilesAdded: staged.changeData.length,
          },
          isBlindAppend: false,
        },
        requirements: standardRequirements({ readFiles: staged.read, removedFiles: staged.removes }),
      };
    },
    rows: (metrics) =>
      Number(metrics?.["numTargetRowsInserted"] ?? 0) + Number(metrics?.["numTargetRowsUpdated"] ?? 0),
  });
}

/** A batch of change events applied by key (AUTO CDC): the MERGE source and what to match on. */
export interface KeyedChanges {
  /** The target's columns plus a BOOLEAN column `deleteMark`: true deletes the matched row. */
  readonly sourceSql: string;
  /** The target's columns (creates and evolves the table). */
  readonly schemaSql: string;
  readonly on: readonly string[];
  readonly deleteMark: string;
}

/**
 * Applies `changes` with one MERGE (update or delete what matches, insert the rest) with `txn`,
 * unless the table already holds it.
 */
export async function mergeBatch(
  target: SinkTarget,
  session: SinkSession,
  changes: KeyedChanges,
  txn: TxnMarker,
  options: BatchOptions = {},
): Promise<BatchCommit> {
  const mark = `source.${quoteIdentifier(changes.deleteMark)}`;
  const rowsSession = options.rowsSession ?? session;
  const described = describedOnce(rowsSession, changes.schemaSql);
  const schemaOf = () => rowsSchema(target, described);
  return commitBatch(target, session, schemaOf, txn, options, {
    prepare: (context, snapshot) =>
      prepareMerge(context, snapshot, {
        source: { sql: changes.sourceSql },
        sourceOnlyColumns: [changes.deleteMark],
        on: changes.on,
        whenMatched: { update: "all" },
        deleteWhen: mark,
        whenNotMatched: "insert",
        insertWhen: `NOT ${mark}`,
      }),
    rows: (metrics) =>
      Number(metrics?.["numTargetRowsInserted"] ?? 0) + Number(metrics?.["numTargetRowsUpdated"] ?? 0),
  });
}

type PreparedBatch = Awaited<ReturnType<typeof prepareWrite>>;

/** The one commit path of a batch: open or create, txn check, evolve, prepare, commit. */
async function commitBatch(
  target: SinkTarget,
  session: SinkSession,
  schemaOf: () => Promise<StructType>,
  txn: TxnMarker,
  options: BatchOptions,
  operation: {
    readonly prepare: (context: OperationContext, snapshot: Snapshot) => Promise<PreparedBatch>;
    readonly rows: (metrics: PreparedBatch["operation"]["operationMetrics"]) => number;
  },
): Promise<BatchCommit> {
  const rowsSession = options.rowsSession ?? session;
  const snapshot = await openOrCreateWith(target, session, schemaOf);
  // An external or Spark-created target may use features this writer cannot honour.
  const skipped = beginTransaction(snapshot, txn);
  if (skipped) return findTxnCommit(target.store, skipped.snapshot, txn);
  const context: OperationContext = {
    store: target.store,
    duck: rowsSession.duck,
    scratch: rowsSession.scratch,
    clock: session.clock,
    files: new LocalFileCache(target.store, rowsSession.scratch),
    ...(options.afterDataFile ? { afterFileUploaded: options.afterDataFile } : {}),
  };
  const evolved = await evolveFor(target, snapshot, schemaOf);
  const prepared = await operation.prepare(context, evolved.snapshot);
  await options.afterDataFiles?.();
  // The commit's own scratch: what its post-commit work copies in (the files auto-compaction
  // rewrites) leaves with it, not at the end of the task's last batch.
  const commitScratch = session.scratch.deferredChild("commit-");
  const outcome = await commitTransaction(
    target.store,
    {
      readSnapshot: snapshot,
      prepared: evolved.metaData
        ? { ...prepared, actions: [{ metaData: evolved.metaData }, ...prepared.actions] }
        : prepared,
      txn,
      ...(options.timestampFloor !== undefined ? { timestampFloor: options.timestampFloor } : {}),
    },
    { clock: session.clock, session: { ...session, scratch: commitScratch } },
  ).finally(() => commitScratch.dispose());
  switch (outcome.status) {
    case "committed":
      return {
        version: outcome.version,
        timestamp: outcome.timestamp,
        alreadyCommitted: false,
        rows: operation.rows(prepared.operation.operationMetrics),
        bytes: prepared.actions.reduce((sum, action) => sum + ("add" in action ? action.add.size : 0), 0),
      };
    case "txn-skipped":
      // The same batch landed meanwhile (a retried task racing itself): not an error.
      return findTxnCommit(target.store, outcome.snapshot, txn);
    case "conflict":
      throw new TableWriteConflictError(target.name, outcome.error);
  }
}

/**
 * The commit that recorded `txn`, when the table holds it already: found by walking the log back
 * from the latest version (a retried batch is normally among the last few commits).
 */
async function findTxnCommit(store: ObjectStore, snapshot: Snapshot, txn: TxnMarker): Promise<BatchCommit> {
  for (let version = snapshot.version; version >= 0; version--) {
    const actions = await readCommit(store, version);
    const marker = actions.find((a) => "txn" in a && a.txn.appId === txn.appId);
    if (marker && "txn" in marker && marker.txn.version === txn.version) {
      const commitInfo = findCommitInfo(actions);
      return {
        version,
        timestamp: await commitTimestampAt(store, version),
        alreadyCommitted: true,
        rows: Number(commitInfo?.operationMetrics?.["numOutputRows"] ?? 0),
        bytes: Number(commitInfo?.operationMetrics?.["numOutputBytes"] ?? 0),
      };
    }
  }
  // Held, but its commit was cleaned from the log: the latest version is the best bound left.
  return {
    version: snapshot.version,
    timestamp: snapshot.timestamp,
    alreadyCommitted: true,
    rows: 0,
    bytes: 0,
  };
}

/**
 * Overwrites the table with `rowsSql` in one commit (a materialized view's refresh). The table's
 * schema follows the rows' (Delta's `overwriteSchema`, as a Databricks materialized view follows its
 * query): a deploy that adds, drops or retypes a column changes the schema in the same commit. With
 * `rowsSession` (a sandbox's), the rows SQL runs and the data files are staged there, as a batch's
 * are; the commit and what follows it run in the engine's session.
 */
export async function overwriteTable(
  target: SinkTarget,
  session: SinkSession,
  rowsSql: string,
  options: Pick<WriteOptions, "timestampFloor" | "extraParameters" | "beforeCommit"> &
    Pick<BatchOptions, "rowsSession"> & {
      /** The rows SQL's columns when the caller has described them (no DESCRIBE asked again). */
      readonly columns?: readonly DescribedColumn[];
    } = {},
): Promise<{ version: number; timestamp: number; rows: number }> {
  const rowsSession = options.rowsSession ?? session;
  const { columns } = options;
  const described = columns ? () => Promise.resolve(columns) : describedOnce(rowsSession, rowsSql);
  const schemaOf = () => rowsSchema(target, described);
  const snapshot = await openOrCreateWith(target, session, schemaOf);
  beginTransaction(snapshot, undefined);
  const context: OperationContext = {
    store: target.store,
    duck: rowsSession.duck,
    scratch: rowsSession.scratch,
    clock: session.clock,
    files: new LocalFileCache(target.store, rowsSession.scratch),
  };
  const source = await describedSource(rowsSql, described);
  const prepared = await prepareWrite(context, snapshot, source, "overwrite", await schemaOf());
  return commitOverwrite(target, session, snapshot, prepared, options);
}

/**
 * Commits a prepared overwrite of `snapshot`'s table (the one commit of a materialized view's
 * refresh, whichever engine wrote its files): a conflict is thrown, the commit's rows counted.
 */
export async function commitOverwrite(
  target: SinkTarget,
  session: SinkSession,
  snapshot: Snapshot,
  prepared: PreparedCommit,
  options: Pick<WriteOptions, "timestampFloor" | "extraParameters" | "beforeCommit">,
): Promise<{ version: number; timestamp: number; rows: number }> {
  const commitScratch = session.scratch.deferredChild("commit-");
  const outcome = await commitTransaction(
    target.store,
    {
      readSnapshot: snapshot,
      prepared,
      ...(options.timestampFloor !== undefined ? { timestampFloor: options.timestampFloor } : {}),
      ...(options.extraParameters ? { extraParameters: options.extraParameters } : {}),
      ...(options.beforeCommit ? { beforeCommit: options.beforeCommit } : {}),
    },
    { clock: session.clock, session: { ...session, scratch: commitScratch } },
  ).finally(() => commitScratch.dispose());
  if (outcome.status === "conflict") throw outcome.error;
  return {
    version: outcome.version,
    timestamp: outcome.timestamp,
    rows: Number(prepared.operation.operationMetrics?.["numOutputRows"] ?? 0),
  };
}

/** `SELECT * FROM "<table>"`. */
export function selectAll(table: string): string {
  return `SELECT * FROM ${quoteIdentifier(table)}`;
}
