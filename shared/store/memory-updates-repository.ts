import { UpdateNotFoundError } from "./errors.ts";
import { StoreError } from "../object-store/errors.ts";
import { applyMemoryWrites, memoryWrite } from "./memory-store-writes.ts";
import { checkWritesTogether, type StoreWrite } from "./store-writes.ts";
import { memoryPage } from "./memory-pages.ts";
import type { Page, PageRequest } from "./query-pages.ts";
import { TimeOrderedIds } from "./time-ordered-id.ts";
import {
  isTerminal,
  type NewUpdate,
  type TransitionDetails,
  type TransitionResult,
  type UpdateRecord,
  type UpdateState,
  type UpdatesRepository,
} from "./updates-repository.ts";

/**
 * Updates in memory, for fast tests of the control plane and the engine. Same contract as the
 * DynamoDB adapter, checked by the same contract tests. Records are copied in and out.
 */
export class MemoryUpdatesRepository implements UpdatesRepository {
  private readonly updates = new Map<string, Map<string, UpdateRecord>>();
  private readonly ids = new TimeOrderedIds();

  constructor(private readonly now: () => number = Date.now) {}

  async create(update: NewUpdate): Promise<UpdateRecord> {
    const now = this.now();
    const updates = this.of(update.pipelineId);
    const updateId = this.ids.next(now);
    if (updates.has(updateId))
      throw new StoreError(`could not find a free update id for pipeline ${update.pipelineId}`);
    const record: UpdateRecord = {
      pipelineId: update.pipelineId,
      updateId,
      state: update.state ?? "CREATED",
      cause: update.cause,
      definitionVersion: update.definitionVersion,
      request: structuredClone(update.request),
      intent: structuredClone(update.intent),
      createdAt: now,
      lastModified: now,
      ...(update.executionArnOf ? { executionArn: update.executionArnOf(updateId) } : {}),
    };
    updates.set(updateId, record);
    return structuredClone(record);
  }

  async get(pipelineId: string, updateId: string): Promise<UpdateRecord | undefined> {
    const record = this.of(pipelineId).get(updateId);
    return record && structuredClone(record);
  }

  async list(pipelineId: string, page: PageRequest): Promise<Page<UpdateRecord>> {
    const sorted = [...this.of(pipelineId).values()].sort((a, b) => (a.updateId < b.updateId ? -1 : 1));
    const result = memoryPage(sorted, (u) => u.updateId, {
      ...page,
      order: "desc",
      scope: `updates/${pipelineId}`,
    });
    return { ...result, items: result.items.map((u) => structuredClone(u)) };
  }

  async transition(
    pipelineId: string,
    updateId: string,
    state: UpdateState,
    details: TransitionDetails = {},
  ): Promise<TransitionResult> {
    const updates = this.of(pipelineId);
    const current = updates.get(updateId);
    if (!current) throw new UpdateNotFoundError(pipelineId, updateId);
    if (isTerminal(current.state)) return { outcome: "already-final", update: structuredClone(current) };
    const next = this.moved(current, state, details);
    updates.set(updateId, next);
    return { outcome: "transitioned", update: structuredClone(next) };
  }

  async transitionWith(
    pipelineId: string,
    updateId: string,
    state: UpdateState,
    writes: readonly StoreWrite[],
  ): Promise<boolean> {
    checkWritesTogether(writes);
    const updates = this.of(pipelineId);
    const own = memoryWrite({
      check: () => {
        const current = updates.get(updateId);
        return current !== undefined && !isTerminal(current.state);
      },
      apply: () => updates.set(updateId, this.moved(updates.get(updateId)!, state, {})),
    });
    return applyMemoryWrites([own, ...writes]);
  }

  private moved(current: UpdateRecord, state: UpdateState, details: TransitionDetails): UpdateRecord {
    const now = this.now();
    return {
      ...current,
      state,
      lastModified: now,
      ...(isTerminal(state) ? { endedAt: now } : {}),
      ...(details.error ? { error: { ...details.error } } : {}),
    };
  }

  async recordExecution(pipelineId: string, updateId: string, executionArn: string): Promise<void> {
    const updates = this.of(pipelineId);
    const current = updates.get(updateId);
    if (!current) throw new UpdateNotFoundError(pipelineId, updateId);
    updates.set(updateId, { ...current, executionArn, lastModified: this.now() });
  }

  async requestHandover(pipelineId: string, updateId: string, at: number): Promise<void> {
    const updates = this.of(pipelineId);
    const current = updates.get(updateId);
    if (!current) throw new UpdateNotFoundError(pipelineId, updateId);
    updates.set(updateId, { ...current, handoverAt: at, lastModified: this.now() });
  }

  private of(pipelineId: string): Map<string, UpdateRecord> {
    let updates = this.updates.get(pipelineId);
    if (!updates) {
      updates = new Map();
      this.updates.set(pipelineId, updates);
    }
    return updates;
  }

  async discard(pipelineId: string, updateId: string): Promise<boolean> {
    const updates = this.of(pipelineId);
    if (updates.get(updateId)?.state !== "QUEUED") return false;
    return updates.delete(updateId);
  }
}
