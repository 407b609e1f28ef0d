import { StoreConfigurationError } from "./errors.ts";

/**
 * The Checkpoints repository port: the flow side of the micro-batch protocol (architecture.md
 * "Streaming: the micro-batch protocol"). For one batch of a flow:
 *
 * 1. `head(flow)`: the checkpoint the flow continues from (offsets, state reference) and its `seq`.
 * 2. `plan(flow, {parent: head.seq, offsets, stateRef})`: write-ahead. A checkpoint item with
 *    `seq = max(seq) + 1` and status PLANNED, by conditional put: two planners cannot both take a seq.
 * 3. (the engine reads, transforms and writes data files)
 * 4. (the engine commits the table with `txn {appId: <pipelineId>/<flowId>, version: seq}`)
 * 5. `commit(flow, seq, …)`: the checkpoint becomes COMMITTED with the table version (and operator
 *    state version) it produced and HEAD moves to it, in one transaction that holds only if the checkpoint is still PLANNED and HEAD
 *    is still at its parent.
 *
 * Every write an update makes (plan, commit, HEAD move) may be fenced on it: with `activeUpdateId`
 * it holds only while that update is still the pipeline's active update, in the same transaction, so
 * an update that was stopped, timed out or superseded cannot move a flow after the pipeline moved on.
 *
 * `seq` is never reused: after a rewind (`moveHead` back) the next batch gets a fresh seq whose parent
 * is the restored checkpoint, so checkpoints form a tree and HEAD says which branch is live.
 *
 * A HEAD move (rewind, reset) abandons every batch planned before it: a PLANNED checkpoint is resumed
 * only if it was planned after the last move (`FlowResume.abandonedThrough`), even when HEAD is back
 * at its parent. So a batch that can never finish (its file removed, its state gone) is left behind
 * by a reset, not resumed by every update after it.
 *
 * Seq 0 is reserved. The HEAD item of a flow is stored at seq 0, and `HEAD = 0` means "the root": no
 * checkpoint yet, or a checkpoint reset (read the source from the start, empty operator state).
 * Batches are numbered from 1. The highest seq must never be deleted by retention clean-up, or it
 * could be handed out again.
 */

/** A flow of a pipeline; checkpoints are keyed `<pipelineId>#<flowId>`. */
export interface FlowRef {
  readonly pipelineId: string;
  readonly flowId: string;
}

/**
 * The Delta `txn` appId a flow stamps on its commits (step 4): the micro-batch writes it, and the
 * rewind reads a table's txns back through it.
 */
export function flowAppId(flow: FlowRef): string {
  return `${flow.pipelineId}/${flow.flowId}`;
}

export function flowKey(flow: FlowRef): string {
  return `${flow.pipelineId}#${flow.flowId}`;
}

/**
 * The means to fence a write on the pipeline's active update (the Pipelines port, or its table),
 * which an adapter built without one cannot do: every adapter refuses such a write the same way.
 */
export function requireFencePort<Port>(port: Port | undefined): Port {
  if (port === undefined)
    throw new StoreConfigurationError(
      "the Checkpoints repository was built without the Pipelines repository: it cannot fence a write on the active update",
    );
  return port;
}

/** HEAD's own seq, and HEAD's value for "the root" (nothing consumed). */
export const ROOT_SEQ = 0;

export const CHECKPOINT_STATUSES = ["PLANNED", "COMMITTED"] as const;
export type CheckpointStatus = (typeof CHECKPOINT_STATUSES)[number];

/** Source positions as the engine defines them (versions, file sets, …); stored as JSON. */
export type SourceOffsets = Readonly<Record<string, unknown>>;

export interface Checkpoint {
  readonly flow: FlowRef;
  readonly seq: number;
  /** The checkpoint this batch continues from; `ROOT_SEQ` for the first batch after a (re)start. */
  readonly parent: number;
  readonly status: CheckpointStatus;
  /** Where the source stands after this batch. */
  readonly offsets: SourceOffsets;
  /** The operator/source state written by this batch (`state/<pipelineId>/<flowId>/…`), if any. */
  readonly stateRef?: string;
  /** The update that planned it. */
  readonly updateId?: string;
  /** Epoch milliseconds. */
  readonly plannedAt: number;
  /** The table version the batch's commit produced (COMMITTED only). */
  readonly tableVersion?: number;
  /** The batch's commit timestamp: the same causal time as the table commit (COMMITTED only). */
  readonly committedAt?: number;
  /**
   * The operator state version the batch produced (a `shared/state` manifest key; COMMITTED only).
   * Absent: the flow keeps no operator state. A rewind to this checkpoint restores exactly it.
   */
  readonly stateVersion?: string;
  /** What the batch takes of its source, as planned (`files`, `bytes`, `records`; engine/batch-size.ts). */
  readonly size?: BatchMeasures;
  /** The bound a size failure taught the flow, kept by each batch planned after it. */
  readonly learnedBound?: BatchMeasures;
  /**
   * Why the batch failed for size (its function's temporary space, memory or time ran out) before
   * anything of it was committed (PLANNED only): the next attempt plans it again, smaller.
   */
  readonly oversized?: string;
  /**
   * Where the flow stood before a rewind or reset moved its HEAD back (the abandoned branch's HEAD
   * offsets), kept by each batch of the replay that is still short of it (engine/replay-frontier.ts).
   */
  readonly replayUntil?: SourceOffsets;
  /**
   * Why the batch this one re-plans failed for its size on DuckDB (its function's space, memory or
   * time ran out): under `pipelines.engine: auto` this batch runs on Spark, whatever its size, and so
   * do the batches it is halved into should it fail for size there too (engine/batch-replan.ts).
   */
  readonly outgrewDuckDb?: string;
}

/** Named counts of a batch (what the engine measures; plain numbers here). */
export type BatchMeasures = Readonly<Record<string, number>>;

export interface FlowHead {
  /** The live checkpoint's seq, or `ROOT_SEQ`. */
  readonly seq: number;
  /** The live checkpoint; undefined at the root. */
  readonly checkpoint?: Checkpoint;
}

export interface PlanRequest {
  /** HEAD's seq when the batch was planned. */
  readonly parent: number;
  readonly offsets: SourceOffsets;
  readonly stateRef?: string;
  readonly updateId?: string;
  readonly size?: BatchMeasures;
  readonly learnedBound?: BatchMeasures;
  readonly replayUntil?: SourceOffsets;
  readonly outgrewDuckDb?: string;
  /** The fence: the plan holds only while this is the pipeline's active update. */
  readonly activeUpdateId?: string;
}

/** The fence held not: the pipeline's active update is another one (or none). */
export interface Fenced {
  readonly outcome: "fenced";
  readonly activeUpdateId?: string;
}

export type PlanResult =
  | { readonly outcome: "planned"; readonly checkpoint: Checkpoint }
  /** Another planner took the next seq first. */
  | { readonly outcome: "seq-taken"; readonly seq: number }
  | Fenced;

export interface CommitRequest {
  readonly tableVersion: number;
  /** Epoch milliseconds: the table commit's timestamp. */
  readonly committedAt: number;
  /** The operator state version the batch wrote (or carried over from its parent). */
  readonly stateVersion?: string;
  /** The fence: the commit holds only while this is the pipeline's active update. */
  readonly activeUpdateId?: string;
}

export interface MoveHeadOptions {
  /** Only if HEAD is still there. */
  readonly expectedHead?: number;
  /** The fence: the move holds only while this is the pipeline's active update. */
  readonly activeUpdateId?: string;
}

export type CommitResult =
  | { readonly outcome: "committed"; readonly checkpoint: Checkpoint }
  /** It was committed before (a retried step 5): nothing changed. */
  | { readonly outcome: "already-committed"; readonly checkpoint: Checkpoint }
  /** HEAD is no longer at the batch's parent (a rewind or reset moved it): the batch must not land. */
  | { readonly outcome: "head-moved"; readonly head: number }
  | Fenced;

export type MoveHeadResult =
  | { readonly outcome: "moved" }
  /** HEAD was not where the caller expected. */
  | { readonly outcome: "head-moved"; readonly head: number }
  /** The target is not a committed checkpoint of the flow. */
  | { readonly outcome: "not-committed"; readonly seq: number }
  | Fenced;

export interface CheckpointPage {
  readonly checkpoints: readonly Checkpoint[];
  /** Pass as `afterSeq` for the next page; absent on the last. */
  readonly nextAfterSeq?: number;
}

/** HEAD and the checkpoints planned after it: where a micro-batch starts from. */
export interface FlowResume {
  readonly head: FlowHead;
  /** Every checkpoint with a seq above HEAD's, every branch, by seq. */
  readonly after: readonly Checkpoint[];
  /**
   * The highest seq planned when HEAD was last moved by `moveHead` (`ROOT_SEQ` if never): a PLANNED
   * checkpoint at or below it was abandoned by that move, and is never resumed.
   */
  readonly abandonedThrough: number;
}

export interface CheckpointsRepository {
  head(flow: FlowRef): Promise<FlowHead>;
  /**
   * `head(flow)` and every checkpoint `list(flow, {afterSeq: head.seq})` pages through, as of one read
   * of HEAD: a micro-batch's first step in two round trips (HEAD, then one scan from its checkpoint).
   */
  resume(flow: FlowRef): Promise<FlowResume>;
  plan(flow: FlowRef, request: PlanRequest): Promise<PlanResult>;
  /**
   * Records that the PLANNED batch `seq` failed for size (`reason`), so the next attempt plans it
   * again rather than resuming it. False when the batch is not PLANNED (committed meanwhile, or
   * never planned): nothing changed.
   */
  markOversized(flow: FlowRef, seq: number, reason: string): Promise<boolean>;
  /** Throws `CheckpointNotFoundError` if the seq was never planned. */
  commit(flow: FlowRef, seq: number, request: CommitRequest): Promise<CommitResult>;
  get(flow: FlowRef, seq: number): Promise<Checkpoint | undefined>;
  /** The flow's checkpoints by seq, every branch. */
  list(
    flow: FlowRef,
    page?: { readonly afterSeq?: number; readonly limit?: number },
  ): Promise<CheckpointPage>;
  /**
   * Points HEAD at a committed checkpoint, or at `ROOT_SEQ` (a checkpoint reset), abandoning every
   * batch planned so far (also when HEAD is already there). For rewind and reset.
   */
  moveHead(flow: FlowRef, seq: number, options?: MoveHeadOptions): Promise<MoveHeadResult>;
  /**
   * The committed checkpoint with the latest `committedAt` at or before `time` (epoch ms), on any
   * branch. HEAD moves are not commits: between a rewind and the next batch, HEAD sits on an older
   * checkpoint than this returns. To find where a flow stood at a time, read the `txn` of its table
   * at that time (a RESTORE restores it) and take that checkpoint.
   */
  latestCommittedAtOrBefore(flow: FlowRef, time: number): Promise<Checkpoint | undefined>;
}
