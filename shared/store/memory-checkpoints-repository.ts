import { CheckpointNotFoundError } from "./errors.ts";
import {
  ROOT_SEQ,
  flowKey,
  requireFencePort,
  type Checkpoint,
  type CheckpointPage,
  type CheckpointsRepository,
  type CommitRequest,
  type CommitResult,
  type FlowHead,
  type FlowResume,
  type FlowRef,
  type Fenced,
  type MoveHeadOptions,
  type MoveHeadResult,
  type PlanRequest,
  type PlanResult,
} from "./checkpoints-repository.ts";

const DEFAULT_PAGE_SIZE = 100;

interface FlowCheckpoints {
  head: number;
  readonly bySeq: Map<number, Checkpoint>;
  /** The highest seq ever planned, kept apart so `forget` can never cause a seq to be reused. */
  maxSeq: number;
  /** `maxSeq` at the last HEAD move. */
  abandonedThrough: number;
}

/**
 * The Checkpoints port in memory, for fast tests of the engine and rewind (crash-injection loops,
 * property tests). Same contract as the DynamoDB adapter, checked by the same contract tests. Each
 * method runs without awaiting in between, so concurrent calls see each other's writes as DynamoDB's
 * conditions would (a fenced write looks up the active update first). Offsets are copied in and out,
 * as a store would.
 */
export class MemoryCheckpointsRepository implements CheckpointsRepository {
  private readonly flows = new Map<string, FlowCheckpoints>();

  /** `activeUpdate` answers a pipeline's active update, for fenced writes (the Pipelines port's `get`). */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly activeUpdate?: (pipelineId: string) => Promise<string | undefined>,
  ) {}

  async head(flow: FlowRef): Promise<FlowHead> {
    const entry = this.entry(flow);
    const checkpoint = entry.bySeq.get(entry.head);
    return checkpoint ? { seq: entry.head, checkpoint: copy(checkpoint) } : { seq: entry.head };
  }

  async resume(flow: FlowRef): Promise<FlowResume> {
    const head = await this.head(flow);
    const after = [...this.entry(flow).bySeq.values()]
      .filter((c) => c.seq > head.seq)
      .sort((a, b) => a.seq - b.seq)
      .map(copy);
    return { head, after, abandonedThrough: this.entry(flow).abandonedThrough };
  }

  async plan(flow: FlowRef, request: PlanRequest): Promise<PlanResult> {
    const fenced = await this.fenced(flow, request.activeUpdateId);
    if (fenced) return fenced;
    const entry = this.entry(flow);
    const seq = ++entry.maxSeq;
    const checkpoint: Checkpoint = {
      flow: { ...flow },
      seq,
      parent: request.parent,
      status: "PLANNED",
      offsets: structuredClone(request.offsets),
      ...(request.stateRef !== undefined ? { stateRef: request.stateRef } : {}),
      ...(request.updateId !== undefined ? { updateId: request.updateId } : {}),
      ...(request.size !== undefined ? { size: { ...request.size } } : {}),
      ...(request.learnedBound !== undefined ? { learnedBound: { ...request.learnedBound } } : {}),
      ...(request.replayUntil !== undefined ? { replayUntil: structuredClone(request.replayUntil) } : {}),
      ...(request.outgrewDuckDb !== undefined ? { outgrewDuckDb: request.outgrewDuckDb } : {}),
      plannedAt: this.now(),
    };
    entry.bySeq.set(seq, checkpoint);
    return { outcome: "planned", checkpoint: copy(checkpoint) };
  }

  async markOversized(flow: FlowRef, seq: number, reason: string): Promise<boolean> {
    const entry = this.entry(flow);
    const planned = entry.bySeq.get(seq);
    if (planned?.status !== "PLANNED") return false;
    entry.bySeq.set(seq, { ...planned, oversized: reason });
    return true;
  }

  async commit(flow: FlowRef, seq: number, request: CommitRequest): Promise<CommitResult> {
    const fenced = await this.fenced(flow, request.activeUpdateId);
    const entry = this.entry(flow);
    const planned = entry.bySeq.get(seq);
    if (!planned) throw new CheckpointNotFoundError(flowKey(flow), seq);
    if (planned.status === "COMMITTED") return { outcome: "already-committed", checkpoint: copy(planned) };
    if (fenced) return fenced;
    if (entry.head !== planned.parent) return { outcome: "head-moved", head: entry.head };
    const committed: Checkpoint = {
      ...planned,
      status: "COMMITTED",
      tableVersion: request.tableVersion,
      committedAt: request.committedAt,
      ...(request.stateVersion !== undefined ? { stateVersion: request.stateVersion } : {}),
    };
    entry.bySeq.set(seq, committed);
    entry.head = seq;
    return { outcome: "committed", checkpoint: copy(committed) };
  }

  async get(flow: FlowRef, seq: number): Promise<Checkpoint | undefined> {
    const checkpoint = this.entry(flow).bySeq.get(seq);
    return checkpoint && copy(checkpoint);
  }

  async list(
    flow: FlowRef,
    page: { readonly afterSeq?: number; readonly limit?: number } = {},
  ): Promise<CheckpointPage> {
    const after = page.afterSeq ?? ROOT_SEQ;
    const limit = page.limit ?? DEFAULT_PAGE_SIZE;
    const all = [...this.entry(flow).bySeq.values()]
      .filter((c) => c.seq > after)
      .sort((a, b) => a.seq - b.seq);
    const checkpoints = all.slice(0, limit).map(copy);
    const last = checkpoints[checkpoints.length - 1];
    return { checkpoints, ...(all.length > limit && last ? { nextAfterSeq: last.seq } : {}) };
  }

  async moveHead(flow: FlowRef, seq: number, options: MoveHeadOptions = {}): Promise<MoveHeadResult> {
    const fenced = await this.fenced(flow, options.activeUpdateId);
    if (fenced) return fenced;
    const entry = this.entry(flow);
    if (options.expectedHead !== undefined && entry.head !== options.expectedHead) {
      return { outcome: "head-moved", head: entry.head };
    }
    if (seq !== ROOT_SEQ && entry.bySeq.get(seq)?.status !== "COMMITTED")
      return { outcome: "not-committed", seq };
    entry.head = seq;
    entry.abandonedThrough = entry.maxSeq;
    return { outcome: "moved" };
  }

  async latestCommittedAtOrBefore(flow: FlowRef, time: number): Promise<Checkpoint | undefined> {
    let latest: Checkpoint | undefined;
    for (const checkpoint of this.entry(flow).bySeq.values()) {
      const at = checkpoint.committedAt;
      if (checkpoint.status !== "COMMITTED" || at === undefined || at > time) continue;
      const latestAt = latest?.committedAt ?? -Infinity;
      if (at > latestAt || (at === latestAt && checkpoint.seq > (latest?.seq ?? 0))) latest = checkpoint;
    }
    return latest && copy(latest);
  }

  /** Removes a checkpoint, as retention clean-up would; its seq is still never handed out again. */
  forget(flow: FlowRef, seq: number): void {
    this.entry(flow).bySeq.delete(seq);
  }

  /** The refusal of a write fenced on an update that is not the pipeline's active one; else nothing. */
  private async fenced(flow: FlowRef, activeUpdateId: string | undefined): Promise<Fenced | undefined> {
    if (activeUpdateId === undefined) return undefined;
    const active = await requireFencePort(this.activeUpdate)(flow.pipelineId);
    if (active === activeUpdateId) return undefined;
    return { outcome: "fenced", ...(active ? { activeUpdateId: active } : {}) };
  }

  private entry(flow: FlowRef): FlowCheckpoints {
    const key = flowKey(flow);
    let entry = this.flows.get(key);
    if (!entry) {
      entry = { head: ROOT_SEQ, bySeq: new Map(), maxSeq: ROOT_SEQ, abandonedThrough: ROOT_SEQ };
      this.flows.set(key, entry);
    }
    return entry;
  }
}

function copy(checkpoint: Checkpoint): Checkpoint {
  return structuredClone(checkpoint);
}
