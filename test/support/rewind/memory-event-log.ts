import { timeOrderedId } from "../../../shared/store/time-ordered-id.ts";
import {
  DEFAULT_EVENT_RETENTION_MS,
  type EventLogRepository,
  type EventPageRequest,
  type EventQuery,
  type NewEvent,
  type PipelineEvent,
} from "../../../shared/store/event-log-repository.ts";
import type { Page } from "../../../shared/store/query-pages.ts";

/**
 * The event-log port in memory, for fast tests: the DynamoDB adapter's contract (time-ordered ids
 * encoding the timestamp, newest first by default, expired events never returned), with one page.
 */
export class MemoryEventLog implements EventLogRepository {
  readonly stored: { event: PipelineEvent; expiresAt: number }[] = [];
  private sequence = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async append(event: NewEvent): Promise<PipelineEvent> {
    const time = event.timestamp ?? this.now();
    const stored: PipelineEvent = {
      id: timeOrderedId(time),
      sequence: { control_plane_seq_no: time * 1000 + (this.sequence++ % 1000) },
      origin: event.origin,
      timestamp: new Date(time).toISOString(),
      message: event.message,
      level: event.level,
      maturity_level: event.maturity_level ?? "STABLE",
      ...(event.error ? { error: event.error } : {}),
      event_type: event.event_type,
      details: structuredClone(event.details) as Record<string, unknown>,
    };
    this.stored.push({ event: stored, expiresAt: time + (event.retentionMs ?? DEFAULT_EVENT_RETENTION_MS) });
    return stored;
  }

  async get(pipelineId: string, id: string): Promise<PipelineEvent | undefined> {
    return this.live().find((e) => e.id === id && e.origin.pipeline_id === pipelineId);
  }

  async query(pipelineId: string, query: EventQuery, _page: EventPageRequest): Promise<Page<PipelineEvent>> {
    const items = this.live()
      .filter((e) => e.origin.pipeline_id === pipelineId)
      .filter((e) => query.eventType === undefined || e.event_type === query.eventType)
      .filter((e) => query.updateId === undefined || e.origin.update_id === query.updateId)
      .filter((e) => query.datasetName === undefined || e.origin.dataset_name === query.datasetName)
      .sort((a, b) => a.sequence.control_plane_seq_no - b.sequence.control_plane_seq_no);
    return { items: query.order === "asc" ? items : items.reverse() };
  }

  /** Events of a type, oldest first (for assertions). */
  ofType(eventType: string): PipelineEvent[] {
    return this.stored.map((s) => s.event).filter((e) => e.event_type === eventType);
  }

  private live(): PipelineEvent[] {
    const now = this.now();
    return this.stored.filter((s) => s.expiresAt > now).map((s) => s.event);
  }
}
