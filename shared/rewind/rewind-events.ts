/**
 * What the rewind domain needs of the event log (api.md "Event log": the Databricks event shape,
 * with a TTL): append an event, and read a pipeline's events of one type. Rewind points are
 * `rewind_summary` events, rewind progress `rewind_progress`, full refreshes and resets
 * `dataset_reset`, warnings `warning`. DynamoDB deletes expired items lazily (up to days late), so
 * readers here filter by `expiresAt` themselves: an expired event is invisible everywhere.
 */

export const EVENT_TYPES = {
  rewindSummary: "rewind_summary",
  rewindProgress: "rewind_progress",
  datasetReset: "dataset_reset",
  warning: "warning",
} as const;

export type EventLevel = "INFO" | "WARN" | "ERROR" | "METRICS";

export interface EventOrigin {
  readonly pipeline_id: string;
  readonly update_id?: string;
  readonly dataset_name?: string;
  readonly flow_name?: string;
}

export interface NewPipelineEvent {
  readonly event_type: string;
  readonly level: EventLevel;
  readonly message: string;
  readonly origin: EventOrigin;
  readonly details: Readonly<Record<string, unknown>>;
  /** Epoch milliseconds of the event. */
  readonly timestamp: number;
  /** Epoch milliseconds after which the event is gone (the item's TTL). */
  readonly expiresAt: number;
}

export interface PipelineEvent extends NewPipelineEvent {
  /** Time-ordered and unique; a `rewind_summary`'s id is its `rewind_point_id`. */
  readonly id: string;
}

/** The port. Implementations: the store's DynamoDB event log, and `MemoryRewindEventLog` for tests. */
export interface RewindEventLog {
  /** Appends the event under a fresh time-ordered id and returns it. */
  append(event: NewPipelineEvent): Promise<PipelineEvent>;
  /**
   * The pipeline's events of `eventType`, newest first, including expired ones the store has not
   * deleted yet (callers filter with `isLive`).
   */
  listByType(pipelineId: string, eventType: string): Promise<PipelineEvent[]>;
}

/** Whether the event is still within its TTL at `now`. */
export function isLive(event: { readonly expiresAt: number }, now: number): boolean {
  return event.expiresAt > now;
}

/** The pipeline's live events of a type, newest first. */
export async function liveEvents(
  log: RewindEventLog,
  pipelineId: string,
  eventType: string,
  now: number,
): Promise<PipelineEvent[]> {
  const events = await log.listByType(pipelineId, eventType);
  return events.filter((event) => isLive(event, now));
}
