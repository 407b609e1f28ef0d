import type { Page } from "./query-pages.ts";
import type { StoreWrite } from "./store-writes.ts";

/**
 * The event log port: events in the Databricks event-log shape (api.md "Event log"), kept for a
 * retention (DynamoDB TTL; 30 days unless an event says otherwise: rewind points keep their own) and
 * read by pipeline and time range, by event type, or by id. Expired events are never returned, even
 * before DynamoDB's TTL sweeper has deleted them.
 */

import { EVENT_LEVELS, MATURITY_LEVELS } from "./record-states.ts";

export { EVENT_LEVELS, MATURITY_LEVELS };
export type EventLevel = (typeof EVENT_LEVELS)[number];

export type MaturityLevel = (typeof MATURITY_LEVELS)[number];

/** Events are kept this long unless the event sets its own retention. */
export const DEFAULT_EVENT_RETENTION_MS = 30 * 86_400_000;

export interface EventOrigin {
  readonly pipeline_id: string;
  readonly pipeline_name: string;
  readonly update_id: string;
  readonly flow_id?: string;
  readonly flow_name?: string;
  readonly dataset_name?: string;
  /** The micro-batch's checkpoint seq. */
  readonly batch_id?: number;
  /** Ebb's own: the branch an update on a branch ran on (docs/branches.md); absent for live's. */
  readonly branch?: string;
}

/** Databricks' `error` field: the exception chain and whether it ended the update. */
export interface EventError {
  readonly exceptions: readonly {
    readonly class_name: string;
    readonly message: string;
    readonly stack?: string;
  }[];
  readonly fatal: boolean;
}

export interface PipelineEvent {
  /** Time-ordered: it encodes `timestamp`. */
  readonly id: string;
  /** Orders events with the same timestamp: epoch ms × 1000 + a per-process counter. */
  readonly sequence: { readonly control_plane_seq_no: number };
  readonly origin: EventOrigin;
  /** ISO-8601, milliseconds, UTC. */
  readonly timestamp: string;
  readonly message: string;
  readonly level: EventLevel;
  readonly maturity_level: MaturityLevel;
  readonly error?: EventError;
  readonly event_type: string;
  readonly details: Readonly<Record<string, unknown>>;
}

export interface NewEvent {
  readonly origin: EventOrigin;
  readonly message: string;
  readonly level: EventLevel;
  /** @default "STABLE" */
  readonly maturity_level?: MaturityLevel;
  readonly error?: EventError;
  readonly event_type: string;
  readonly details: Readonly<Record<string, unknown>>;
  /** Epoch milliseconds. @default now */
  readonly timestamp?: number;
  /** How long to keep the event. @default DEFAULT_EVENT_RETENTION_MS */
  readonly retentionMs?: number;
}

/** Epoch-millisecond bounds; any left out are open. */
export interface TimeRange {
  readonly after?: number;
  readonly atOrAfter?: number;
  readonly before?: number;
  readonly atOrBefore?: number;
}

export interface EventQuery {
  readonly range?: TimeRange;
  /** @default "desc" (newest first, as the API) */
  readonly order?: "asc" | "desc";
  /** Only this event type (read through the `byEventType` index). */
  readonly eventType?: string;
  readonly levels?: readonly EventLevel[];
  readonly updateId?: string;
  readonly datasetName?: string;
}

export interface EventPageRequest {
  readonly limit: number;
  /** A token from a previous page. It carries its query: the `query` argument is then ignored. */
  readonly pageToken?: string;
}

export interface EventLogRepository {
  /** Stores an event and returns it as it will be read. */
  append(event: NewEvent): Promise<PipelineEvent>;
  /**
   * Stores events together (on DynamoDB, one BatchWriteItem per 25), in order: each gets an id and
   * sequence number after the one before, as if appended one by one.
   */
  appendAll(events: readonly NewEvent[]): Promise<PipelineEvent[]>;
  /**
   * `appendAll` as writes to make with another repository's (store-writes.ts), one per event, each
   * given its id and sequence number as `appendAll` gives them.
   */
  appendWrites(events: readonly NewEvent[]): StoreWrite[];
  /** The event, or undefined if there is none (or it has expired). */
  get(pipelineId: string, id: string): Promise<PipelineEvent | undefined>;
  /** A page of the pipeline's events. Throws `InvalidPageTokenError` for a foreign token. */
  query(pipelineId: string, query: EventQuery, page: EventPageRequest): Promise<Page<PipelineEvent>>;
}
