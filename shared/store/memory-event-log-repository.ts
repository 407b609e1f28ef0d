import { InvalidPageTokenError } from "./errors.ts";
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

interface MemoryPageToken {
  readonly pipelineId: string;
  readonly query: EventQuery;
  readonly direction: "next" | "prev";
  readonly sortKey: string;
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

  async append(event: NewEvent): Promise<PipelineEvent> {
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
    const token = page.pageToken === undefined ? undefined : readToken(page.pageToken, pipelineId);
    const effective = token?.query ?? query;
    const ascending = (effective.order ?? "desc") === "asc";
    const precedes = (a: string, b: string) => (ascending ? a < b : a > b);
    const ordered = this.live()
      .filter((s) => s.event.origin.pipeline_id === pipelineId && matches(s, effective))
      .sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
    if (!ascending) ordered.reverse();

    let items: StoredEvent[];
    let more: boolean;
    if (token?.direction === "prev") {
      const preceding = ordered.filter((s) => precedes(s.sortKey, token.sortKey));
      items = preceding.slice(-page.limit);
      more = preceding.length > page.limit;
    } else {
      const following = token ? ordered.filter((s) => precedes(token.sortKey, s.sortKey)) : ordered;
      items = following.slice(0, page.limit);
      more = following.length > page.limit;
    }
    const first = items[0];
    const last = items[items.length - 1];
    const at = (direction: "next" | "prev", stored: StoredEvent | undefined) =>
      stored && writeToken({ pipelineId, query: effective, direction, sortKey: stored.sortKey });
    const backward = token?.direction === "prev";
    const next = backward || more ? at("next", last) : undefined;
    const prev = backward ? (more ? at("prev", first) : undefined) : token ? at("prev", first) : undefined;
    return {
      items: items.map((s) => structuredClone(s.event)),
      ...(next ? { nextPageToken: next } : {}),
      ...(prev ? { prevPageToken: prev } : {}),
    };
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

function writeToken(token: MemoryPageToken): string {
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}

function readToken(text: string, pipelineId: string): MemoryPageToken {
  try {
    const token = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as MemoryPageToken | null;
    const valid =
      token !== null &&
      token.pipelineId === pipelineId &&
      typeof token.query === "object" &&
      token.query !== null &&
      (token.direction === "next" || token.direction === "prev") &&
      typeof token.sortKey === "string";
    if (valid) return token;
  } catch {
    // fall through
  }
  throw new InvalidPageTokenError(text);
}
