import type {
  EventLevel,
  EventLogRepository,
  NewEvent,
  PipelineEvent,
} from "../store/event-log-repository.ts";
import type { RewindEnvironment } from "./rewind-environment.ts";

/**
 * How the rewind domain writes and reads the event log (the store's `EventLogRepository`; api.md
 * "Event log"). Rewind points are `rewind_summary` events, rewind progress `rewind_progress`, full
 * refreshes and resets `dataset_reset`, checkpoint resets `checkpoint_reset`, warnings `warning`. Each event carries its retention (the
 * TTL); the repository never returns an expired event.
 */

export const EVENT_TYPES = {
  rewindSummary: "rewind_summary",
  rewindProgress: "rewind_progress",
  datasetReset: "dataset_reset",
  checkpointReset: "checkpoint_reset",
  branchPublished: "branch_published",
  warning: "warning",
} as const;

/** Events read per page while collecting one type. */
const PAGE_SIZE = 100;

export interface RewindEventInput {
  readonly event_type: string;
  readonly level: EventLevel;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
  readonly updateId?: string;
  readonly dataset?: string;
  /** Epoch ms. */
  readonly timestamp: number;
  readonly retentionMs: number;
}

export function appendEvent(
  env: Pick<RewindEnvironment, "pipelineId" | "pipeline" | "events">,
  event: RewindEventInput,
): Promise<PipelineEvent> {
  return env.events.append(pipelineEvent(env, event));
}

/** The event as stored for the pipeline, to append alone or write with another repository's write. */
export function pipelineEvent(
  env: Pick<RewindEnvironment, "pipelineId" | "pipeline">,
  event: RewindEventInput,
): NewEvent {
  return {
    origin: {
      pipeline_id: env.pipelineId,
      pipeline_name: env.pipeline.definition.name,
      // Scheduled captures belong to no update.
      update_id: event.updateId ?? "",
      ...(event.dataset !== undefined ? { dataset_name: event.dataset } : {}),
    },
    event_type: event.event_type,
    level: event.level,
    message: event.message,
    details: event.details,
    timestamp: event.timestamp,
    retentionMs: event.retentionMs,
  };
}

/** The pipeline's live events of one type, newest first. */
export async function eventsOfType(
  events: EventLogRepository,
  pipelineId: string,
  eventType: string,
): Promise<PipelineEvent[]> {
  const out: PipelineEvent[] = [];
  let pageToken: string | undefined;
  do {
    const page = await events.query(
      pipelineId,
      { eventType, order: "desc" },
      { limit: PAGE_SIZE, ...(pageToken ? { pageToken } : {}) },
    );
    out.push(...page.items);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return out;
}

/** Epoch ms of an event. */
export function eventTime(event: PipelineEvent): number {
  return Date.parse(event.timestamp);
}
