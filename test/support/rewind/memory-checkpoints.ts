import { CheckpointNotFoundError } from "../../../shared/store/errors.ts";
import {
  flowKey,
  ROOT_SEQ,
  type Checkpoint,
  type CheckpointPage,
  type CheckpointsRepository,
  type CommitRequest,
  type CommitResult,
  type FlowHead,
  type FlowRef,
  type MoveHeadResult,
  type PlanRequest,
  type PlanResult,
} from "../../../shared/store/checkpoints-repository.ts";

/**
 * The Checkpoints port in memory, for fast tests of the rewind domain: the same contract as the
 * DynamoDB adapter (seq 0 reserved, write-ahead plan, commit + HEAD move together only if HEAD is at
 * the parent, moveHead only to a committed checkpoint or the root).
 */
export class MemoryCheckpoints implements CheckpointsRepository {
  private readonly flows = new Map<string, { head: number; items: Map<number, Checkpoint> }>();

  constructor(private readonly now: () => number = Date.now) {}

  private of(flow: FlowRef) {
    const key = flowKey(flow);
    let entry = this.flows.get(key);
    if (!entry) this.flows.set(key, (entry = { head: ROOT_SEQ, items: new Map() }));
    return entry;
  }

  async head(flow: FlowRef): Promise<FlowHead> {
    const entry = this.of(flow);
    const checkpoint = entry.items.get(entry.head);
    return checkpoint ? { seq: entry.head, checkpoint } : { seq: entry.head };
  }

  async plan(flow: FlowRef, request: PlanRequest): Promise<PlanResult> {
    const entry = this.of(flow);
    const seq = Math.max(ROOT_SEQ, ...entry.items.keys()) + 1;
    const checkpoint: Checkpoint = {
      flow,
      seq,
      parent: request.parent,
      status: "PLANNED",
      offsets: structuredClone(request.offsets),
      ...(request.stateRef !== undefined ? { stateRef: request.stateRef } : {}),
      ...(request.updateId !== undefined ? { updateId: request.updateId } : {}),
      plannedAt: this.now(),
    };
    entry.items.set(seq, checkpoint);
    return { outcome: "planned", checkpoint };
  }

  async commit(flow: FlowRef, seq: number, request: CommitRequest): Promise<CommitResult> {
    const entry = this.of(flow);
    const planned = entry.items.get(seq);
    if (!planned) throw new CheckpointNotFoundError(flowKey(flow), seq);
    if (planned.status === "COMMITTED") return { outcome: "already-committed", checkpoint: planned };
    if (entry.head !== planned.parent) return { outcome: "head-moved", head: entry.head };
    const checkpoint: Checkpoint = { ...planned, status: "COMMITTED", ...request };
    entry.items.set(seq, checkpoint);
    entry.head = seq;
    return { outcome: "committed", checkpoint };
  }

  async get(flow: FlowRef, seq: number): Promise<Checkpoint | undefined> {
    return this.of(flow).items.get(seq);
  }

  async list(
    flow: FlowRef,
    page: { readonly afterSeq?: number; readonly limit?: number } = {},
  ): Promise<CheckpointPage> {
    const all = [...this.of(flow).items.values()]
      .filter((c) => c.seq > (page.afterSeq ?? ROOT_SEQ))
      .sort((a, b) => a.seq - b.seq);
    const limit = page.limit ?? 100;
    const checkpoints = all.slice(0, limit);
    return { checkpoints, ...(all.length > limit ? { nextAfterSeq: checkpoints.at(-1)!.seq } : {}) };
  }

  async moveHead(
    flow: FlowRef,
    seq: number,
    options: { readonly expectedHead?: number } = {},
  ): Promise<MoveHeadResult> {
    const entry = this.of(flow);
    if (options.expectedHead !== undefined && entry.head !== options.expectedHead) {
      return { outcome: "head-moved", head: entry.head };
    }
    if (seq !== ROOT_SEQ && entry.items.get(seq)?.status !== "COMMITTED")
      return { outcome: "not-committed", seq };
    entry.head = seq;
    return { outcome: "moved" };
  }

  async latestCommittedAtOrBefore(flow: FlowRef, time: number): Promise<Checkpoint | undefined> {
    return [...this.of(flow).items.values()]
      .filter((c) => c.status === "COMMITTED" && (c.committedAt ?? 0) <= time)
      .sort((a, b) => (a.committedAt ?? 0) - (b.committedAt ?? 0) || a.seq - b.seq)
      .at(-1);
  }

  /** Test hook: forget a checkpoint (retention clean-up). */
  forget(flow: FlowRef, seq: number): void {
    this.of(flow).items.delete(seq);
  }
}
