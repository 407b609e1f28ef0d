import { UpdateNotFoundError } from "../../../shared/store/errors.ts";
import type { Page, PageRequest } from "../../../shared/store/query-pages.ts";
import { timeOrderedId } from "../../../shared/store/time-ordered-id.ts";
import {
  isTerminal,
  type NewUpdate,
  type TransitionDetails,
  type TransitionResult,
  type UpdateRecord,
  type UpdateState,
  type UpdatesRepository,
} from "../../../shared/store/updates-repository.ts";

/** The Updates port in memory, for fast tests: time-ordered ids, terminal states final, one page. */
export class MemoryUpdates implements UpdatesRepository {
  private readonly records = new Map<string, UpdateRecord>();

  constructor(private readonly now: () => number = Date.now) {}

  async create(update: NewUpdate): Promise<UpdateRecord> {
    const time = this.now();
    const record: UpdateRecord = {
      pipelineId: update.pipelineId,
      updateId: timeOrderedId(time),
      state: update.state ?? "CREATED",
      cause: update.cause,
      definitionVersion: update.definitionVersion,
      request: update.request,
      createdAt: time,
      lastModified: time,
    };
    this.records.set(`${record.pipelineId}/${record.updateId}`, record);
    return record;
  }

  async get(pipelineId: string, updateId: string): Promise<UpdateRecord | undefined> {
    return this.records.get(`${pipelineId}/${updateId}`);
  }

  async list(pipelineId: string, _page: PageRequest): Promise<Page<UpdateRecord>> {
    const items = [...this.records.values()]
      .filter((r) => r.pipelineId === pipelineId)
      .sort((a, b) => (a.updateId < b.updateId ? 1 : -1));
    return { items };
  }

  async transition(
    pipelineId: string,
    updateId: string,
    state: UpdateState,
    details: TransitionDetails = {},
  ): Promise<TransitionResult> {
    const record = await this.get(pipelineId, updateId);
    if (!record) throw new UpdateNotFoundError(pipelineId, updateId);
    if (isTerminal(record.state) && record.state !== state)
      return { outcome: "already-final", update: record };
    const time = this.now();
    const next: UpdateRecord = {
      ...record,
      state,
      lastModified: time,
      ...(isTerminal(state) ? { endedAt: time } : {}),
      ...(details.error ? { error: details.error } : {}),
    };
    this.records.set(`${pipelineId}/${updateId}`, next);
    return { outcome: "transitioned", update: next };
  }

  async recordExecution(pipelineId: string, updateId: string, executionArn: string): Promise<void> {
    const record = await this.get(pipelineId, updateId);
    if (!record) throw new UpdateNotFoundError(pipelineId, updateId);
    this.records.set(`${pipelineId}/${updateId}`, { ...record, executionArn });
  }
}
