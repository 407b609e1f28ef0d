import { carriedBy, memoryPage } from "./memory-pages.ts";
import { memoryWrite } from "./memory-store-writes.ts";
import type { StoreWrite } from "./store-writes.ts";
import { TimeOrderedIds } from "./time-ordered-id.ts";
import type { Page } from "./query-pages.ts";
import {
  DEFAULT_EVENT_RETENTION_MS,
  type EventLogRepository,
  type EventPageRequest,
  type EventQuery,
  type NewEvent,
  type PipelineEvent,
  type TimeRange,
} from "./event-log-repository.ts";

interface StoredEvent {
  readonly event: PipelineEvent;
  /** `<ISO timestamp>#<id>`: the DynamoDB adapter's sort key, so both order events alike. */
  readonly sortKey: string;
  readonly time: number;
  readonly expiresAt: number;
}

/**
 * The event log in memory, for fast tests of the engine and rewind. Same contract as the DynamoDB
 * adapter, checked by the same contract tests: same ids, order, time ranges, filters, paging in both
 * directions, tokens that carry their query, and expired events hidden.
 */
export class MemoryEventLogRepository implements EventLogRepository {
  private readonly events: StoredEvent[] = [];
  private readonly ids = new TimeOrderedIds();
  private lastSequence = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async appendAll(events: readonly NewEvent[]): Promise<PipelineEvent[]> {
    const stored: PipelineEvent[] = [];
    for (const event of events) stored.push(await this.append(event));
    return stored;
  }

  async append(event: NewEvent): Promise<PipelineEvent> {
    return this.store(event);
  }

  appendWrites(events: readonly NewEvent[]): StoreWrite[] {
    return events.map((event) => memoryWrite({ check: () => true, apply: () => void this.store(event) }));
  }

  private store(event: NewEvent): PipelineEvent {
    const time = event.timestamp ?? this.now();
    const stored: PipelineEvent = structuredClone({
      id: this.ids.next(time),
      sequence: { control_plane_seq_no: (this.lastSequence = Math.max(this.lastSequence + 1, time * 1000)) },
      origin: event.origin,
      timestamp: new Date(time).toISOString(),
      message: event.message,
      level: event.level,
      maturity_level: event.maturity_level ?? "STABLE",
      ...(event.error ? { error: event.error } : {}),
      event_type: event.event_type,
      details: event.details,
    });
    this.events.push({
      event: stored,
      sortKey: `${stored.timestamp}#${stored.id}`,
      time,
      // Whole seconds, as DynamoDB's TTL attribute.
      expiresAt: Math.ceil((time + (event.retentionMs ?? DEFAULT_EVENT_RETENTION_MS)) / 1000) * 1000,
    });
    return structuredClone(stored);
  }

  async get(pipelineId: string, id: string): Promise<PipelineEvent | undefined> {
    const found = this.live().find((s) => s.event.id === id && s.event.origin.pipeline_id === pipelineId);
    return found && structuredClone(found.event);
  }

  async query(pipelineId: string, query: EventQuery, page: EventPageRequest): Promise<Page<PipelineEvent>> {
    // A token carries its query (api.md: a page_token excludes every other parameter).
    const effective =
      page.pageToken === undefined ? query : (carriedBy<EventQuery>(page.pageToken, pipelineId) ?? query);
    const matching = this.live()
      .filter((s) => s.event.origin.pipeline_id === pipelineId && matches(s, effective))
      .sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
    const result = memoryPage(
      matching,
      (s) => s.sortKey,
      {
        limit: page.limit,
        order: effective.order ?? "desc",
        scope: pipelineId,
        ...(page.pageToken ? { pageToken: page.pageToken } : {}),
      },
      effective,
    );
    return { ...result, items: result.items.map((s) => structuredClone(s.event)) };
  }

  private live(): StoredEvent[] {
    const now = this.now();
    return this.events.filter((s) => s.expiresAt > now);
  }
}

function matches(stored: StoredEvent, query: EventQuery): boolean {
  const { event } = stored;
  return (
    inRange(stored.time, query.range ?? {}) &&
    (query.eventType === undefined || event.event_type === query.eventType) &&
    (query.levels === undefined || query.levels.length === 0 || query.levels.includes(event.level)) &&
    (query.updateId === undefined || event.origin.update_id === query.updateId) &&
    (query.datasetName === undefined || event.origin.dataset_name === query.datasetName)
  );
}

function inRange(time: number, range: TimeRange): boolean {
  return (
    (range.after === undefined || time > range.after) &&
    (range.atOrAfter === undefined || time >= range.atOrAfter) &&
    (range.before === undefined || time < range.before) &&
    (range.atOrBefore === undefined || time <= range.atOrBefore)
  );
}
