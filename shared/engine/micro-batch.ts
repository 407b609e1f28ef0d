import { quoteLiteral } from "../duck/sql-text.ts";
import type { FlowDefinition, FlowOptions, StreamingTableDefinition } from "../pipeline/definition-schema.ts";
import { currentSnapshot, TABLE_PROPERTY, TableNotFoundError } from "../delta/index.ts";
import {
  flowAppId,
  type Checkpoint,
  type CheckpointsRepository,
  type FlowHead,
  type FlowRef,
} from "../store/checkpoints-repository.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import type { CrashHook, CrashPoint } from "./crash-points.ts";
import { QUARANTINE_SUFFIX, type DatasetCatalog } from "./dataset-catalog.ts";
import {
  BatchOversizedError,
  BatchTooLargeError,
  EngineError,
  MalformedRecordsError,
  fencedOut,
} from "./errors.ts";
import { describeSize, exceeds, tighter, type BatchBound, type BatchSize } from "./batch-size.ts";
import {
  boundedOptions,
  decidePending,
  mayReplan,
  optionBound,
  type PendingDecision,
} from "./batch-replan.ts";
import { sizeFailureReason } from "./size-failure.ts";
import { batchBytesFromEnv } from "./task-sizing.ts";
import type { EventStreams } from "../store/event-streams.ts";
import {
  BAD_RECORDS_TABLE,
  createFlowSource,
  type FlowSource,
  type LoadedSourceBatch,
  type PlannedSourceBatch,
  type SourceBacklog,
} from "./flow-source.ts";
import { isMalformedInputError } from "./record-reader.ts";
import { createEmptyTable } from "./empty-table.ts";
import { Sandbox } from "./sandbox.ts";
import { loadReadSnapshots, registerSnapshotViews } from "./snapshot-views.ts";
import { sourceOffsetSchema, type SourceOffset } from "./source-offsets.ts";
import { replayFrontier } from "./replay-frontier.ts";
import { updateFence } from "./update-fence.ts";
import {
  appendBatch,
  appendStagedFiles,
  mergeBatch,
  type BatchCommit,
  type SinkSession,
  type SinkTarget,
} from "./table-sink.ts";
import { readsChangeFeed } from "../pipeline/auto-cdc-rules.ts";
import { applyChanges, tombstoneRetentionSeconds } from "./auto-cdc/apply-changes.ts";
import { cdcBatchReduction } from "./auto-cdc/batch-reduction.ts";
import { openCdcState } from "./auto-cdc/cdc-state.ts";
import { DELETE_MARK } from "./auto-cdc/cdc-statements.ts";
import { isStatefulFlow, runStatefulOperators, type StateProgress } from "./stateful/stateful-batch.ts";
import { applyExpectations, type DataQuality, type ExpectationTarget } from "./expectations.ts";
import type { BatchEngine } from "../pipeline/pipeline-settings.ts";
import {
  mayRunOnSpark,
  chooseEngine,
  readViewsOf,
  outgrownBatchGoesToSpark,
  type EngineQuestion,
} from "./spark/engine-choice.ts";
import { FlowNotSupportedOnSparkError, SparkEngineNotConfiguredError } from "./spark/errors.ts";
import { newestUpstreamOf, runSparkBatch, runSparkJob } from "./spark/spark-batch.ts";
import { planSparkReads } from "./spark/spark-snapshot-reads.ts";
import { discardSettledSparkJobs } from "./spark/spark-job-folders.ts";
import { deleteStagedRows, stagedRowsSql } from "./spark/staged-rows.ts";
import { commitSparkCdcApply, prepareSparkCdcApply } from "./spark/spark-cdc-apply.ts";
import type { SparkJobs } from "./spark/spark-jobs.ts";

/**
 * One micro-batch of a flow, exactly once (architecture.md "Streaming: the micro-batch protocol"):
 *
 * 1. Load the flow's HEAD (offsets after the last committed batch, `seq`). A checkpoint still PLANNED
 *    whose parent is HEAD, planned since HEAD last moved, is an unfinished batch: it is resumed with
 *    its own seq and end offsets (one planned before a rewind or reset was abandoned by it) — unless
 *    it failed for size or is larger than the flow's bound now allows, and its txn is not in the
 *    table: then it is left behind and planned again, smaller (batch-replan.ts), with a WARN event.
 * 2. Otherwise plan: choose the end offsets within the flow's bounds (files, bytes, rows, records;
 *    an auto_loader writes its changelog of files first) and write the checkpoint `seq = max + 1`,
 *    PLANNED, parent = HEAD, with the batch's size (a conditional put: write-ahead, before any data
 *    is written). Nothing new: caught up.
 * 3. Read the rows between HEAD's offsets and the end offsets into the sandbox as `source`; divert
 *    malformed records (fail, or to `<dataset>_quarantine`); register the snapshots the SQL reads;
 *    run the stateful operators (watermark, deduplication) from HEAD's state version, writing the
 *    next one; run the flow's SQL, its rows streaming straight into the table's new data files.
 * 4. Commit them with `txn {appId: <pipelineId>/<flowId>, version: seq}` stamped at least 1 ms after
 *    the newest upstream commit consumed. A table that already holds that txn is not written again
 *    (checked before step 3 writes anything).
 * 5. Mark the checkpoint COMMITTED with the table version and the state version, and move HEAD (one
 *    transaction).
 *
 * Steps 2 and 5 are fenced on the update (a condition in their transaction), and step 4 asks just
 * before the commit: an update that was stopped, timed out or superseded lands nothing more.
 *
 * A crash anywhere leaves either no PLANNED checkpoint past HEAD (nothing happened) or one that step 1
 * resumes; orphan data files from step 3 are never committed and VACUUM removes them. A batch that
 * fails for size in steps 3-4 (temporary space, memory, time: size-failure.ts) is marked so on its
 * checkpoint, as the state machine's Catch marks one whose function timed out or ran out of memory.
 */

export interface FlowRun {
  readonly pipelineId: string;
  readonly updateId: string;
  readonly dataset: StreamingTableDefinition;
  readonly flow: FlowDefinition;
  readonly catalog: DatasetCatalog;
  readonly checkpoints: CheckpointsRepository;
  /** The engine's DuckDB session, scratch folder and clock (the Delta writer works in them). */
  readonly session: SinkSession;
  /** The store rooted at an external location (`delta` and `auto_loader` paths). */
  readonly locate: (location: string) => ObjectStore;
  readonly crash?: CrashHook;
  /** Kafka and Kinesis clients. */
  readonly eventStreams: EventStreams;
  /**
   * Whether `updateId` is still the pipeline's active update: asked right before the table commit,
   * whose S3 put cannot carry the DynamoDB fence that the checkpoint's plan and commit carry.
   */
  readonly isActive: () => Promise<boolean>;
  /** Bytes a batch takes when the flow sets no `max_bytes_per_batch`. @default the environment's (task-sizing.ts) */
  readonly defaultBatchBytes?: number;
  /** Told when an unfinished batch is planned again, smaller (for the event log's WARN). */
  readonly onReplan?: (replan: BatchReplan) => Promise<void>;
  /** The Spark engine, where one is configured (spark/spark-jobs.ts). */
  readonly spark?: SparkJobs;
  /** This update's engine for every batch, over the pipeline's `pipelines.engine`. */
  readonly engine?: BatchEngine;
}

/** An unfinished batch left behind and planned again within a smaller bound (step 1). */
export interface BatchReplan {
  readonly flow: string;
  readonly oldSeq: number;
  readonly oldSize: BatchSize;
  readonly newSeq: number;
  readonly newSize: BatchSize | undefined;
  readonly reason: string;
}

export interface BatchOutcome {
  readonly seq: number;
  /** The batch was planned by an earlier, interrupted attempt. */
  readonly resumed: boolean;
  readonly rowsIn: number;
  readonly rowsOut: number;
  /** Bytes of the data files the batch's commit added. */
  readonly bytesWritten: number;
  readonly badRecords: number;
  readonly startOffset?: SourceOffset;
  readonly endOffset: SourceOffset;
  readonly tableVersion: number;
  readonly committedAt: number;
  readonly durationMs: number;
  readonly skippedRestores: readonly { readonly version: number; readonly restoredVersion: number }[];
  /** The batch took everything its source held when planned (no need to plan another to know). */
  readonly caughtUp: boolean;
  /** What the source still held past the batch when it was planned (none for a resumed batch). */
  readonly backlog?: SourceBacklog;
  /**
   * Of `rowsIn`, the records the flow had read before a rewind or reset moved it back
   * (replay-frontier.ts); absent where the source does not tell.
   */
  readonly replayedRecords?: number;
  /** What the flow's stateful operators did, for a flow that has them. */
  readonly state?: StateProgress;
  /** The dataset's expectations over the batch's rows, when it has any. */
  readonly dataQuality?: DataQuality;
  /** The engine that ran the batch, and its Spark job's id when Spark did. */
  readonly engine: BatchEngine;
  readonly sparkJobId?: string;
  /** Under `auto`, why a batch that could have gone to Spark stayed on DuckDB (spark/engine-choice.ts). */
  readonly keptOffSpark?: string;
}

/** Runs one micro-batch; undefined when the flow has caught up with its source. */
export async function runMicroBatch(run: FlowRun): Promise<BatchOutcome | undefined> {
  const started = run.session.clock();
  const ref: FlowRef = { pipelineId: run.pipelineId, flowId: run.flow.name };
  const crash = async (point: CrashPoint, seq: number) => run.crash?.(point, seq);

  // 1. HEAD, and an unfinished batch planned on top of it (left behind when it must be smaller).
  const { head, after, abandonedThrough } = await run.checkpoints.resume(ref);
  const startOffset = head.checkpoint ? parseOffset(head.checkpoint.offsets) : undefined;
  const scanned = scanAfter(head.seq, after, abandonedThrough);
  const frontierOffsets = replayFrontier(head, after, abandonedThrough);
  const maxSeq = scanned.maxSeq;
  let pending = scanned.pending;
  const options = effectiveOptions(run);
  let learned = head.checkpoint?.learnedBound as BatchBound | undefined;
  const functionBytes = run.defaultBatchBytes ?? defaultBatchBytes();
  let bound = tighter(optionBound(run.flow.source, options, functionBytes), learned);
  // A batch that may run on Spark is planned as the flow's own options take it, before the task
  // function's byte bound splits it: on Spark (by the engine, or above `auto`'s threshold) it runs
  // whole, and is resumed so; on DuckDB it is planned again within the bound.
  const whole = mayRunOnSpark(engineQuestion(run))
    ? optionBound(run.flow.source, options, Number.MAX_SAFE_INTEGER)
    : undefined;
  const pendingEngine =
    pending && whole
      ? batchEngine(run, pending.size as BatchSize | undefined, pending.outgrewDuckDb).engine
      : "duckdb";
  if (pending && pendingEngine === "spark")
    bound = tighter(whole, pending.oversized !== undefined ? learned : undefined);
  let replan: Extract<PendingDecision, { kind: "replan" }> | undefined;
  if (pending && mayReplan(pending, bound)) {
    const committed = await tableHoldsTxn(run, flowAppId(ref), pending.seq);
    // Under `auto`, a batch DuckDB failed for its size goes to Spark whole, once (batch-replan.ts).
    const toSpark =
      whole && run.spark && pendingEngine === "duckdb" && outgrownBatchGoesToSpark(engineQuestion(run))
        ? whole
        : undefined;
    const decision = decidePending(pending, bound, learned, committed, toSpark);
    if (decision.kind === "too-large") throw tooLarge(run, pending, decision.size, decision.reason);
    if (decision.kind === "replan") {
      replan = decision;
      bound = decision.bound;
      learned = decision.learned ?? learned;
    }
  }
  const replaced = replan ? pending : undefined;
  if (replan) pending = undefined;
  const outgrewDuckDb = pending ? pending.outgrewDuckDb : replan?.outgrewDuckDb;

  // Opened on first use: a flow that has caught up never needs one.
  let opening: Promise<Sandbox> | undefined;
  const openSandbox = () =>
    (opening ??= Sandbox.open({
      namespace: run.catalog.namespace,
      signal: run.session.signal,
      owner: `flow "${run.flow.name}"`,
    }));
  try {
    const sourceWithin = (within: BatchBound) =>
      createFlowSource({
        pipelineId: run.pipelineId,
        flowName: run.flow.name,
        datasetName: run.dataset.name,
        source: run.flow.source,
        options: boundedOptions(run.flow.source, options, within),
        store: run.catalog.store,
        datasetTable: (name) => run.catalog.tableStore(name),
        locate: run.locate,
        eventStreams: run.eventStreams,
        sandbox: openSandbox,
        clock: run.session.clock,
        changeFeed: readsChangeFeed(run.catalog.pipeline.definition, run.flow),
        ...(run.flow.join ? { joinedStream: run.flow.join.stream } : {}),
      });
    let source = sourceWithin(bound);

    // 2. Plan (write-ahead), unless resuming.
    let seq: number;
    let endOffset: SourceOffset;
    let caughtUp = false;
    let plannedSize: BatchSize | undefined;
    let backlog: SourceBacklog | undefined;
    // The frontier of a replay, when the source can tell which records it had read (replay-frontier.ts).
    const replay = source.replay;
    const frontierOf = (end: SourceOffset, offsets: unknown): SourceOffset | undefined => {
      const parsed = sourceOffsetSchema.safeParse(offsets);
      return replay && parsed.success && parsed.data.kind === end.kind ? parsed.data : undefined;
    };
    let frontier: SourceOffset | undefined;
    if (pending) {
      seq = pending.seq;
      endOffset = parseOffset(pending.offsets);
      plannedSize = pending.size as BatchSize | undefined;
      frontier = frontierOf(endOffset, frontierOffsets);
    } else {
      let planned: PlannedSourceBatch | undefined;
      const wholeSource = whole && !replan ? sourceWithin(whole) : undefined;
      const wholePlan = await wholeSource?.plan(startOffset, maxSeq + 1);
      if (
        wholeSource &&
        wholePlan &&
        (batchEngine(run, wholePlan.size).engine === "spark" || fits(wholePlan.size, bound))
      ) {
        source = wholeSource;
        planned = wholePlan;
      } else if (!wholeSource || wholePlan) {
        planned = await source.plan(startOffset, maxSeq + 1);
      }
      if (!planned) {
        // Nothing yet, ever: the table exists empty all the same, for what reads it (empty-table.ts).
        if (!head.checkpoint) {
          const target = { store: run.catalog.tableStore(run.dataset.name), name: run.dataset.name };
          await createEmptyTable(run, { ...target, ...tableLayout(run.dataset) }, openSandbox);
        }
        return undefined;
      }
      // There is a batch: start the sandbox while the checkpoint is written.
      void openSandbox().catch(() => undefined);
      frontier = frontierOf(planned.end, frontierOffsets);
      const replayUntil = frontier && (await replay!.behind(planned.end, frontier)) ? frontier : undefined;
      const result = await run.checkpoints.plan(ref, {
        parent: head.seq,
        offsets: planned.end,
        updateId: run.updateId,
        activeUpdateId: run.updateId,
        ...(planned.stateRef ? { stateRef: planned.stateRef } : {}),
        ...(planned.size ? { size: { ...planned.size } } : {}),
        ...(learned ? { learnedBound: { ...learned } } : {}),
        ...(replayUntil ? { replayUntil } : {}),
        ...(outgrewDuckDb !== undefined ? { outgrewDuckDb } : {}),
      });
      if (result.outcome === "fenced")
        throw fencedOut(run.updateId, `planning flow "${run.flow.name}"'s next batch`, result);
      if (result.outcome === "seq-taken") {
        throw new EngineError(
          `flow "${run.flow.name}" is being run by another task (seq ${result.seq} was taken): only one update runs a pipeline at a time`,
          { data: { flow: run.flow.name, seq: result.seq } },
        );
      }
      seq = result.checkpoint.seq;
      endOffset = planned.end;
      caughtUp = planned.caughtUp;
      plannedSize = planned.size;
      backlog = planned.backlog;
      if (replan && replaced) {
        await run.onReplan?.({
          flow: run.flow.name,
          oldSeq: replaced.seq,
          oldSize: replan.from,
          newSeq: seq,
          newSize: planned.size,
          reason: replan.reason,
        });
      }
      await crash("after-plan", seq);
    }

    const { engine, keptOffSpark } = batchEngine(run, plannedSize, outgrewDuckDb);
    const committed = await markingSizeFailures<BatchWork>(run, ref, seq, () =>
      engine === "spark"
        ? sparkReadAndCommit(run, ref, seq, head, startOffset, endOffset, openSandbox, crash, source)
        : readAndCommit(run, ref, seq, head, startOffset, endOffset, openSandbox, crash, source),
    );
    const { loaded, state } = committed;
    await crash("after-table-commit", seq);
    // Counted while the query ran, where the source counts lines (flow-source.ts).
    const rowsIn = await loaded.rowsIn;
    const replayedRecords =
      frontier && replay && engine !== "spark"
        ? await replay.records(startOffset, endOffset, frontier, rowsIn)
        : undefined;

    // 5. COMMITTED + HEAD, in one transaction.
    await crash("before-head-move", seq);
    const marked = await run.checkpoints.commit(ref, seq, {
      tableVersion: committed.version,
      committedAt: committed.timestamp,
      ...(committed.stateVersion !== undefined ? { stateVersion: committed.stateVersion } : {}),
      activeUpdateId: run.updateId,
      ...(state?.version !== undefined ? { stateVersion: state.version } : {}),
    });
    if (marked.outcome === "fenced")
      throw fencedOut(run.updateId, `moving flow "${run.flow.name}"'s HEAD to batch ${seq}`, marked);
    if (marked.outcome === "head-moved") {
      throw new EngineError(
        `flow "${run.flow.name}": HEAD moved to ${marked.head} while batch ${seq} ran (a rewind or reset); the batch was not applied to the checkpoint, run the update again`,
        { data: { flow: run.flow.name, seq, head: marked.head } },
      );
    }
    await committed.afterHeadMove?.();
    // Its Spark job's folder (and any a crash or rewind left before it) holds nothing anyone reads now.
    if (engine === "spark")
      await discardSettledSparkJobs(run.catalog.store, run.pipelineId, run.flow.name, seq);
    return {
      seq,
      resumed: pending !== undefined,
      rowsIn,
      rowsOut: committed.rows,
      bytesWritten: committed.bytes,
      badRecords: loaded.badRecords,
      ...(startOffset ? { startOffset } : {}),
      endOffset,
      tableVersion: committed.version,
      committedAt: committed.timestamp,
      durationMs: run.session.clock() - started,
      skippedRestores: loaded.skippedRestores,
      caughtUp,
      ...(backlog ? { backlog } : {}),
      ...(replayedRecords !== undefined ? { replayedRecords } : {}),
      ...(state ? { state } : {}),
      ...(committed.dataQuality ? { dataQuality: committed.dataQuality } : {}),
      engine,
      ...(committed.jobId !== undefined ? { sparkJobId: committed.jobId } : {}),
      ...(keptOffSpark !== undefined ? { keptOffSpark } : {}),
    };
  } finally {
    const opened = await opening?.catch(() => undefined);
    await opened?.close();
  }
}

/**
 * Steps 3 and 4 of batch `seq`: read its rows, run its operators and SQL, commit them to the table.
 */
async function readAndCommit(
  run: FlowRun,
  ref: FlowRef,
  seq: number,
  head: FlowHead,
  startOffset: SourceOffset | undefined,
  endOffset: SourceOffset,
  openSandbox: () => Promise<Sandbox>,
  crash: (point: CrashPoint, seq: number) => Promise<void>,
  source: FlowSource,
) {
  // 3. Read, quarantine, transform.
  const sandbox = await openSandbox();
  const txn = { appId: flowAppId(ref), version: seq };
  const reads = run.catalog.snapshotReads(run.dataset.name, run.flow.name);
  const staticNewest = await registerSnapshotViews(sandbox, reads, await loadReadSnapshots(reads));
  const what = `flow "${run.flow.name}"`;
  const fence = () =>
    updateFence(run.updateId, run.isActive, run.session.signal)(`the commit of ${what}'s batch ${seq}`);
  let loaded = await source.load(startOffset, endOffset);
  if (loaded.badRecords > 0) await divertBadRecords(run, sandbox, seq, txn);
  let state: StateProgress | undefined;
  if (isStatefulFlow(run.flow)) {
    const operate = () =>
      runStatefulOperators({
        sandbox,
        store: run.catalog.store,
        flow: ref,
        definition: run.flow,
        plan: run.catalog.flowPlan(run.flow.name),
        ...(head.checkpoint?.stateVersion ? { parentVersion: head.checkpoint.stateVersion } : {}),
        seq,
      });
    try {
      state = await sandbox.explainingFailures(what, operate);
    } catch (error) {
      // The one-pass read met a malformed record: read again, checking each one.
      if (!loaded.strict || !isMalformedInputError(error)) throw error;
      loaded = await loaded.strict();
      if (loaded.badRecords > 0) await divertBadRecords(run, sandbox, seq, txn);
      state = await sandbox.explainingFailures(what, operate);
    }
    await crash("after-state-write", seq);
  }

  // 4. Commit, idempotently. The query's rows stream from the sandbox straight into data files.
  const rowsSql = await sandbox.checkedQuery(state?.query ?? run.flow.sql, what);
  const commitBatch = async (): Promise<
    BatchCommit & { readonly stateVersion?: string | undefined; readonly dataQuality?: DataQuality }
  > => {
    const newestUpstream = Math.max(loaded.newestUpstreamTimestamp ?? -Infinity, staticNewest ?? -Infinity);
    const target: SinkTarget = {
      store: run.catalog.tableStore(run.dataset.name),
      name: run.dataset.name,
      ...tableLayout(run.dataset),
    };
    const options = {
      rowsSession: await sandbox.writer(),
      ...(Number.isFinite(newestUpstream) ? { timestampFloor: newestUpstream + 1 } : {}),
      afterDataFile: () => crash("after-a-data-file", seq),
      afterDataFiles: async () => {
        await crash("after-data-files", seq);
        await fence();
      },
    };
    return sandbox.explainingFailures(what, async () => {
      // The dataset's expectations see the flow's rows before anything is written (expectations.ts).
      const checked = await applyExpectations(sandbox, expectationTarget(run), rowsSql);
      const written = await (run.flow.auto_cdc
        ? applyChangeBatch(
            run,
            sandbox,
            { sql: checked.rowsSql },
            head.checkpoint?.stateVersion,
            seq,
            target,
            txn,
            options,
          )
        : appendBatch(target, run.session, checked.rowsSql, txn, options));
      return { ...written, ...(checked.quality ? { dataQuality: checked.quality } : {}) };
    });
  };
  let committed;
  try {
    committed = await commitBatch();
  } catch (error) {
    // The one-pass read met a malformed record: read again, checking each one.
    if (!loaded.strict || !isMalformedInputError(error)) throw error;
    loaded = await loaded.strict();
    if (loaded.badRecords > 0) await divertBadRecords(run, sandbox, seq, txn);
    committed = await commitBatch();
  }
  return { ...committed, loaded, state };
}

/** What steps 3 and 4 did, on either engine. */
type BatchWork = BatchCommit & {
  readonly stateVersion?: string | undefined;
  readonly loaded: Pick<LoadedSourceBatch, "rowsIn" | "badRecords" | "skippedRestores">;
  readonly state?: StateProgress | undefined;
  readonly jobId?: string;
  readonly dataQuality?: DataQuality;
  /** Runs once HEAD names the batch (a retry can no longer need what it removes). */
  readonly afterHeadMove?: () => Promise<void>;
};

/** What decides the engine of `run`'s batches, but their size (spark/engine-choice.ts). */
function engineQuestion(run: FlowRun): Omit<EngineQuestion, "size"> {
  return {
    setting: run.catalog.pipeline.settings.engine,
    ...(run.engine ? { override: run.engine } : {}),
    pipeline: run.catalog.pipeline.definition,
    dataset: run.dataset,
    flow: run.flow,
    readViews: readViewsOf(run.catalog, run.dataset.name, run.flow.name),
    functionBatchBytes: run.defaultBatchBytes ?? defaultBatchBytes(),
  };
}

/** Whether a batch of `size` is one the function's `bound` lets DuckDB take as planned. */
function fits(size: BatchSize | undefined, bound: BatchBound): boolean {
  if (size === undefined) return true;
  return !exceeds(size, bound) && (size.bytes ?? 0) <= (bound.maxBytes ?? Number.POSITIVE_INFINITY);
}

/** The engine batch `seq` runs on (spark/engine-choice.ts); a refusal is the batch's error. */
function batchEngine(
  run: FlowRun,
  size: BatchSize | undefined,
  outgrewDuckDb?: string,
): { readonly engine: BatchEngine; readonly keptOffSpark?: string } {
  const choice = chooseEngine({
    ...engineQuestion(run),
    size,
    ...(outgrewDuckDb !== undefined ? { outgrewDuckDb } : {}),
  });
  if (choice.engine === "refused")
    throw new FlowNotSupportedOnSparkError(run.flow.name, choice.reason, "flow", choice.wayOut);
  if (choice.engine === "spark" && !run.spark) throw new SparkEngineNotConfiguredError(run.flow.name);
  return choice;
}

/**
 * Steps 3 and 4 of batch `seq` on Spark: the job computes the planned input (the flow's SQL and the
 * dataset's expectations), Ebb commits its manifest. An AUTO CDC flow's rows, staged by the job, are
 * applied by key in the sandbox against the per-key state and committed as the MERGE, as on DuckDB.
 */
async function sparkReadAndCommit(
  run: FlowRun,
  ref: FlowRef,
  seq: number,
  head: FlowHead,
  startOffset: SourceOffset | undefined,
  endOffset: SourceOffset,
  openSandbox: () => Promise<Sandbox>,
  crash: (point: CrashPoint, seq: number) => Promise<void>,
  source: FlowSource,
): Promise<BatchWork> {
  if (!source.plannedInput)
    throw new FlowNotSupportedOnSparkError(run.flow.name, "its source runs on DuckDB only, for now");
  const txn = { appId: flowAppId(ref), version: seq };
  const target: SinkTarget = {
    store: run.catalog.tableStore(run.dataset.name),
    name: run.dataset.name,
    ...tableLayout(run.dataset),
  };
  const stateful = isStatefulFlow(run.flow);
  // A retry of a batch whose commit landed runs no job: the commit is looked up (table-sink.ts). An
  // AUTO CDC or stateful batch runs again all the same (as on DuckDB): its state version is written
  // again for the checkpoint to name; the commit is not made twice.
  if (!run.flow.auto_cdc && !stateful && (await tableHoldsTxn(run, txn.appId, seq))) {
    const held = await appendStagedFiles(
      target,
      run.session,
      { schema: { type: "struct", fields: [] }, adds: [] },
      txn,
    );
    return { ...held, loaded: { rowsIn: 0, badRecords: 0, skippedRestores: [] } };
  }
  const input = await source.plannedInput(startOffset, endOffset);
  const joinedInput = await source.plannedJoinedInput?.(startOffset, endOffset);
  // What the SQL reads besides its source: the version of each table this batch sees, as files.
  const reads = await planSparkReads(
    run.catalog,
    run.spark!,
    run.catalog.snapshotReads(run.dataset.name, run.flow.name),
    run.flow.name,
  );
  const fence = updateFence(run.updateId, run.isActive, run.session.signal);
  const beforeCommit = async () => {
    await crash("after-data-files", seq);
    await fence(`the commit of flow "${run.flow.name}"'s batch ${seq}`);
  };
  const batch = {
    pipelineId: run.pipelineId,
    flow: run.flow.name,
    dataset: run.dataset.name,
    sql: run.flow.sql,
    seq,
    txn,
    input,
    joinedInput,
    reads: reads.reads,
    readsNewest: reads.newest,
    expectations: run.dataset.expectations,
    catalog: run.catalog,
    spark: run.spark!,
  };
  const cdc = run.flow.auto_cdc;
  if (cdc) {
    // The job classifies the events in Spark SQL, where the flow's rows are, and drops those that
    // cannot decide the target: the apply below gets about one event per key (SCD type 1) or per key
    // and sequence (SCD type 2).
    const plan = run.catalog.flowPlan(run.flow.name);
    const reduce = plan.kind === "auto_cdc" ? cdcBatchReduction(plan) : undefined;
    // A target no other AUTO CDC flow writes is applied in the job itself (spark-cdc-apply.ts).
    const peers = run.dataset.flows.some((flow) => flow.auto_cdc && flow.name !== run.flow.name);
    const inJob =
      plan.kind === "auto_cdc" && !peers
        ? await prepareSparkCdcApply({
            store: run.catalog.store,
            pipelineId: run.pipelineId,
            flow: run.flow.name,
            plan,
            parentVersion: head.checkpoint?.stateVersion,
            seq,
            target,
            targetUri: run.spark!.bucketUri(run.catalog.tablePrefix(run.dataset.name)),
            spark: run.spark!,
            now: run.session.clock(),
            tombstoneGcSeconds: tombstoneRetentionSeconds(run.dataset.properties),
          })
        : undefined;
    const job = await runSparkJob(
      {
        ...batch,
        cdc: {
          ...(cdc.apply_as_deletes !== undefined ? { deletes: cdc.apply_as_deletes } : {}),
          ...(cdc.apply_as_truncates !== undefined ? { truncates: cdc.apply_as_truncates } : {}),
          ...(reduce ? { reduce } : {}),
        },
      },
      inJob ? { cdcApply: inJob.request } : {},
    );
    const sandbox = await openSandbox();
    const newestUpstream = newestUpstreamOf(input, job.manifest, reads.newest);
    const loaded = {
      rowsIn: job.manifest.rowsIn,
      badRecords: 0,
      skippedRestores: input.kind === "table" ? input.skippedRestores : [],
    };
    if (inJob && job.manifest.cdcApplied) {
      const committed = await commitSparkCdcApply(inJob, job, {
        session: run.session,
        txn,
        canonicalType: async (type) => {
          const [row] = await sandbox.rows(`SELECT typeof(CAST(NULL AS ${type})) AS t`);
          return String(row?.["t"]);
        },
        options: {
          ...(newestUpstream !== undefined ? { timestampFloor: newestUpstream + 1 } : {}),
          afterDataFiles: beforeCommit,
        },
      });
      // The job's folder holds the committed files: it stays.
      return {
        ...committed,
        loaded,
        jobId: job.jobId,
        ...(job.dataQuality ? { dataQuality: job.dataQuality } : {}),
      };
    }
    const what = `flow "${run.flow.name}"`;
    const rowsSql = await stagedRowsSql(target.store, job.stagedPath, sandbox, {
      flow: run.flow.name,
      seq,
      jobId: job.jobId,
    });
    const newest = newestUpstream;
    const written = await sandbox.explainingFailures(what, async () =>
      applyChangeBatch(
        run,
        sandbox,
        { sql: rowsSql, classified: true },
        head.checkpoint?.stateVersion,
        seq,
        target,
        txn,
        {
          rowsSession: await sandbox.writer(),
          ...(newest !== undefined ? { timestampFloor: newest + 1 } : {}),
          afterDataFiles: beforeCommit,
        },
      ),
    );
    return {
      ...written,
      loaded,
      jobId: job.jobId,
      ...(job.dataQuality ? { dataQuality: job.dataQuality } : {}),
      // The staged rows are the job's output, not the table's: nothing references them once HEAD moved.
      afterHeadMove: () => deleteStagedRows(target.store, job.stagedPath),
    };
  }
  const outcome = await runSparkBatch({
    ...batch,
    target,
    session: run.session,
    beforeCommit,
    ...(stateful
      ? {
          state: {
            store: run.catalog.store,
            flow: ref,
            definition: run.flow,
            plan: run.catalog.flowPlan(run.flow.name),
            parentVersion: head.checkpoint?.stateVersion,
            seq,
            spark: run.spark!,
          },
          afterStateWrite: () => crash("after-state-write", seq),
        }
      : {}),
  });
  return {
    version: outcome.version,
    timestamp: outcome.timestamp,
    alreadyCommitted: outcome.alreadyCommitted,
    rows: outcome.rows,
    bytes: outcome.bytes,
    loaded: { rowsIn: outcome.rowsIn, badRecords: 0, skippedRestores: outcome.skippedRestores },
    jobId: outcome.jobId,
    ...(outcome.dataQuality ? { dataQuality: outcome.dataQuality } : {}),
    ...(outcome.state ? { state: outcome.state } : {}),
  };
}

/**
 * Runs `work` (steps 3-4 of batch `seq`); a failure for size marks the batch so (its checkpoint's
 * `oversized`) and becomes `BatchOversizedError`, on which the flow runner plans it again, smaller.
 */
async function markingSizeFailures<T>(
  run: FlowRun,
  ref: FlowRef,
  seq: number,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const reason = sizeFailureReason(error);
    if (reason === undefined) throw error;
    if (!(await run.checkpoints.markOversized(ref, seq, reason))) throw error;
    throw new BatchOversizedError(run.flow.name, seq, reason, { cause: error });
  }
}

/**
 * Marks the batch planned on top of `ref`'s HEAD as failed for size (the state machine's Catch, when
 * its function timed out or ran out of memory): the next attempt plans it again, smaller. Returns
 * the batch, or undefined when none was unfinished.
 */
export async function markUnfinishedBatchOversized(
  checkpoints: CheckpointsRepository,
  ref: FlowRef,
  reason: string,
): Promise<Checkpoint | undefined> {
  const { head, after, abandonedThrough } = await checkpoints.resume(ref);
  const { pending } = scanAfter(head.seq, after, abandonedThrough);
  if (!pending || !(await checkpoints.markOversized(ref, pending.seq, reason))) return undefined;
  return pending;
}

/** Whether the flow's table already holds batch `seq`'s txn (committed by step 4). */
async function tableHoldsTxn(run: FlowRun, appId: string, seq: number): Promise<boolean> {
  try {
    const snapshot = await currentSnapshot(run.catalog.tableStore(run.dataset.name));
    return (snapshot.txns.get(appId)?.version ?? -1) >= seq;
  } catch (error) {
    if (error instanceof TableNotFoundError) return false;
    throw error;
  }
}

/** The error for an unfinished batch that failed for size and cannot be halved. */
function tooLarge(run: FlowRun, pending: Checkpoint, size: BatchSize | undefined, reason: string) {
  const what = `batch ${pending.seq}${size ? ` (${describeSize(size)})` : ""}`;
  const fitting = run.flow.options?.max_bytes_per_batch ?? run.defaultBatchBytes ?? defaultBatchBytes();
  return new BatchTooLargeError(run.flow.name, what, size?.bytes, fitting, reason);
}

/** The environment's default batch bytes, read once. */
let environmentBatchBytes: number | undefined;
function defaultBatchBytes(): number {
  return (environmentBatchBytes ??= batchBytesFromEnv());
}

/** The flow's options, with the pipeline's `cloudFiles.useIncrementalListing` where it sets none. */
function effectiveOptions(run: FlowRun): FlowOptions {
  const options = run.flow.options ?? { bad_records: "fail" };
  const listing = run.catalog.pipeline.settings.incrementalListing;
  if (listing === undefined || options.use_incremental_listing !== undefined) return options;
  return { ...options, use_incremental_listing: listing };
}

/**
 * The highest seq after HEAD, and the PLANNED checkpoint on top of HEAD (an unfinished batch), if any:
 * one planned since HEAD last moved (a rewind or reset abandons the batches planned before it).
 */
function scanAfter(headSeq: number, after: readonly Checkpoint[], abandonedThrough: number) {
  let maxSeq = headSeq;
  let pending: Checkpoint | undefined;
  for (const checkpoint of after) {
    maxSeq = Math.max(maxSeq, checkpoint.seq);
    const unfinished = checkpoint.status === "PLANNED" && checkpoint.seq > abandonedThrough;
    if (unfinished && checkpoint.parent === headSeq) pending = checkpoint;
  }
  return { maxSeq, pending };
}

/** Malformed records: fail the batch (default), or commit them to `<dataset>_quarantine` with the batch's txn. */
async function divertBadRecords(
  run: FlowRun,
  sandbox: Sandbox,
  seq: number,
  txn: { appId: string; version: number },
): Promise<void> {
  const mode = run.flow.options?.bad_records ?? "fail";
  if (mode === "fail") {
    const sample = await sandbox.rows(
      `SELECT file, line, error FROM ${BAD_RECORDS_TABLE} ORDER BY file, line LIMIT 10`,
    );
    const [total] = await sandbox.rows(`SELECT count(*)::BIGINT AS n FROM ${BAD_RECORDS_TABLE}`);
    const records = sample.map((r) => ({
      file: String(r["file"]),
      line: Number(r["line"]),
      error: String(r["error"]),
    }));
    throw new MalformedRecordsError(run.flow.name, records, Number(total?.["n"] ?? records.length));
  }
  const quarantined = `${run.dataset.name}${QUARANTINE_SUFFIX}`;
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE __ebb_quarantine AS SELECT file, line, record, error, ${quoteLiteral(run.flow.name)} AS flow, ` +
      `${seq}::BIGINT AS batch_seq FROM ${BAD_RECORDS_TABLE}`,
  );
  const path = await sandbox.exportParquet("__ebb_quarantine");
  await appendBatch(
    { store: run.catalog.tableStore(quarantined), name: quarantined },
    run.session,
    `SELECT * FROM read_parquet(${quoteLiteral(path)})`,
    txn,
  );
}

/**
 * An AUTO CDC batch: its rows are applied as change events by key (auto-cdc/apply-changes.ts) against
 * the per-key state the parent checkpoint names, and committed as one MERGE. The state version it
 * writes is named by its checkpoint (step 5): a rewind or reset of HEAD restores it with the offsets.
 * An SCD type 2 state emptied by a checkpoint reset while the table kept its rows adopts them (each
 * key's versions read from the table until the state holds the key), so the re-read converges.
 */
async function applyChangeBatch(
  run: FlowRun,
  sandbox: Sandbox,
  rows: { readonly sql: string; readonly classified?: boolean },
  parentState: string | undefined,
  seq: number,
  target: SinkTarget,
  txn: { appId: string; version: number },
  options: Parameters<typeof mergeBatch>[4],
): Promise<BatchCommit & { readonly stateVersion: string | undefined }> {
  const cdc = run.catalog.flowPlan(run.flow.name);
  if (cdc.kind !== "auto_cdc") throw new RangeError(`flow ${run.flow.name} is not an AUTO CDC flow`);
  const ref = { store: run.catalog.store, pipelineId: run.pipelineId, flowId: run.flow.name };
  const state = await openCdcState(ref, parentState);
  const peers = await peerStates(run);
  const adopting =
    cdc.scdType === 2 &&
    (state.meta.adopting === true ||
      peers.some((peer) => peer.state.meta.adopting === true) ||
      (parentState === undefined && (await holdsRows(target))));
  if (adopting) await registerSnapshotViews(sandbox, [{ kind: "table", name: ADOPTED, store: target.store }]);
  const planned = await applyChanges({
    flow: run.flow.name,
    cdc,
    sandbox,
    rowsSql: rows.sql,
    ...(rows.classified ? { classified: true } : {}),
    state,
    peers,
    target: run.dataset.name,
    seq,
    now: run.session.clock(),
    tombstoneGcSeconds: tombstoneRetentionSeconds(run.dataset.properties),
    ...(adopting ? { targetRowsSql: `SELECT * FROM ${ADOPTED}` } : {}),
  });
  const committed = await mergeBatch(
    { ...target, properties: { "delta.enableChangeDataFeed": "true", ...target.properties } },
    run.session,
    { sourceSql: planned.sourceSql, schemaSql: planned.schemaSql, on: planned.on, deleteMark: DELETE_MARK },
    txn,
    options,
  );
  return { ...committed, stateVersion: planned.stateVersion };
}

/**
 * The states of the target's other AUTO CDC flows, at their HEAD. The update runs a target's AUTO
 * CDC flows one after another (plan-step.ts), so a HEAD does not move while this batch reads it.
 */
async function peerStates(run: FlowRun) {
  const peers = run.dataset.flows.filter((flow) => flow.auto_cdc && flow.name !== run.flow.name);
  return Promise.all(
    peers.map(async (peer) => {
      const ref = { store: run.catalog.store, pipelineId: run.pipelineId, flowId: peer.name };
      const head = await run.checkpoints.head({ pipelineId: run.pipelineId, flowId: peer.name });
      return { flow: peer.name, state: await openCdcState(ref, head.checkpoint?.stateVersion) };
    }),
  );
}

/** The view of an AUTO CDC target's rows while its state adopts them (after a checkpoint reset). */
const ADOPTED = "__cdc_target";

/**
 * Whether the target already has rows while its flow's state is empty: a checkpoint reset kept them
 * (a first run finds no table, a full refresh an empty one).
 */
async function holdsRows(target: SinkTarget): Promise<boolean> {
  try {
    return (await currentSnapshot(target.store)).files.size > 0;
  } catch (error) {
    if (error instanceof TableNotFoundError) return false;
    throw error;
  }
}

/**
 * A streaming table gains a small file per batch and every reader pays a request per file, so
 * pipeline tables compact themselves unless the definition says otherwise.
 */
const STREAMING_TABLE_DEFAULTS: Readonly<Record<string, string>> = {
  [TABLE_PROPERTY.autoCompact]: "true",
};

function tableLayout(dataset: StreamingTableDefinition) {
  return {
    ...(dataset.partition_by ? { partitionBy: dataset.partition_by } : {}),
    properties: { ...STREAMING_TABLE_DEFAULTS, ...dataset.properties },
  };
}

/** The flow's dataset's expectations: each applies to every flow into the dataset. */
function expectationTarget(run: FlowRun): ExpectationTarget {
  return { dataset: run.dataset.name, flow: run.flow.name, expectations: run.dataset.expectations };
}

function parseOffset(offsets: unknown): SourceOffset {
  return sourceOffsetSchema.parse(offsets);
}
