import type {
  EventError,
  EventLevel,
  EventLogRepository,
  EventOrigin,
  NewEvent,
} from "../store/event-log-repository.ts";
import type { UpdateState } from "../store/updates-repository.ts";
import type { StateProgress } from "./stateful/stateful-batch.ts";
import type { BatchOutcome } from "./micro-batch.ts";
import type { RefreshKind } from "./incremental-view.ts";
import type { ViewRefresh } from "./materialized-view.ts";

/**
 * The events an update writes, in the Databricks event-log shape (api.md "Event log"): the origin
 * of the update filled in once, one method per event type.
 *
 * Writes go out behind the update's work rather than in its way (a DynamoDB round trip per event
 * would dominate a small incremental update), in batches: the events of one moment, and those that
 * arrive while a batch is being written, go out together (`appendAll`: one BatchWriteItem per 25,
 * not a PutItem each). `flush()` waits for all of them and reports the first that failed. Each event
 * has its own, strictly increasing timestamp, so the log orders them as they happened. Writes whose
 * order matters (update state transitions) go one after another through `enqueue`. A step that
 * writes its events with its state change, in one request, holds them (`hold`, then `takeHeld`).
 */
export class EventRecorder {
  #queue: Promise<void> = Promise.resolve();
  /** Events not yet handed to a batch, and the loop writing them (while there are any). */
  #pending: NewEvent[] = [];
  #draining: Promise<void> | undefined;
  /** The last event's timestamp: each event gets a later one, so the log orders them as they happened. */
  #lastTimestamp = Number.NEGATIVE_INFINITY;
  #firstError: { error: unknown } | undefined;
  /** Events kept for the caller to write (`hold`), or undefined while events go out on their own. */
  #held: NewEvent[] | undefined;

  constructor(
    private readonly events: EventLogRepository,
    private readonly origin: Pick<EventOrigin, "pipeline_id" | "pipeline_name" | "update_id">,
    private readonly clock: () => number,
  ) {}

  createUpdate(details: Readonly<Record<string, unknown>>): Promise<void> {
    return this.append("create_update", "INFO", `Update ${this.origin.update_id} started`, {
      create_update: details,
    });
  }

  updateProgress(state: UpdateState, error?: unknown): Promise<void> {
    const level: EventLevel = state === "FAILED" ? "ERROR" : "INFO";
    return this.append(
      "update_progress",
      level,
      `Update ${this.origin.update_id} is ${state}`,
      { update_progress: { state } },
      {},
      error === undefined ? undefined : eventError(error, true),
    );
  }

  /** The update, still RUNNING, continues in a new execution of the state machine (`execution`). */
  executionHandedOver(execution: string, why: string): Promise<void> {
    return this.append(
      "update_progress",
      "INFO",
      `Update ${this.origin.update_id} continues in a new execution, ${execution}: ${why}`,
      { update_progress: { state: "RUNNING", execution } },
    );
  }

  planningInformation(details: Readonly<Record<string, unknown>>): Promise<void> {
    return this.append("planning_information", "INFO", "Planned the update", {
      planning_information: details,
    });
  }

  flowProgress(dataset: string, flow: string, batch: BatchOutcome): Promise<void> {
    return this.append(
      "flow_progress",
      "METRICS",
      `Flow '${flow}' committed batch ${batch.seq}: ${batch.rowsIn} rows in, ${batch.rowsOut} rows out`,
      {
        flow_progress: {
          status: "RUNNING",
          engine: batch.engine,
          ...(batch.sparkJobId !== undefined ? { spark_job_id: batch.sparkJobId } : {}),
          ...(batch.keptOffSpark !== undefined ? { engine_reason: batch.keptOffSpark } : {}),
          metrics: {
            num_input_rows: batch.rowsIn,
            num_output_rows: batch.rowsOut,
            num_output_bytes: batch.bytesWritten,
            ...(batch.backlog?.files !== undefined ? { backlog_files: batch.backlog.files } : {}),
            ...(batch.backlog?.bytes !== undefined ? { backlog_bytes: batch.backlog.bytes } : {}),
            ...(batch.backlog?.records !== undefined ? { backlog_records: batch.backlog.records } : {}),
            ...(batch.backlog?.seconds !== undefined ? { backlog_seconds: batch.backlog.seconds } : {}),
            ...(batch.replayedRecords !== undefined ? { replayed_records: batch.replayedRecords } : {}),
          },
          data_quality: { quarantined_records: batch.badRecords, ...batch.dataQuality },
          ...(batch.state ? stateDetails(batch.state) : {}),
          batch: {
            seq: batch.seq,
            resumed: batch.resumed,
            start_offset: batch.startOffset ?? null,
            end_offset: batch.endOffset,
            duration_ms: batch.durationMs,
            table_version: batch.tableVersion,
            skipped_restores: batch.skippedRestores,
          },
        },
      },
      { dataset_name: dataset, flow_name: flow, flow_id: flow, batch_id: batch.seq },
    );
  }

  /**
   * A materialized view's refresh, as the view's flow (named after the view, as on Databricks):
   * `refresh` says which way it went (INCREMENTAL or FULL_RECOMPUTE) and `refresh_reason` why.
   */
  viewRefresh(view: string, refresh: ViewRefresh & { readonly refresh: RefreshKind }): Promise<void> {
    const kind = refresh.refresh;
    const how = kind === "INCREMENTAL" ? "incrementally" : "by a full recompute";
    return this.append(
      "flow_progress",
      "INFO",
      `Flow '${view}' refreshed ${how}: ${refresh.reason}`,
      {
        flow_progress: {
          status: "COMPLETED",
          engine: refresh.engine,
          ...(refresh.sparkJobId !== undefined ? { spark_job_id: refresh.sparkJobId } : {}),
          ...(refresh.keptOffSpark !== undefined ? { engine_reason: refresh.keptOffSpark } : {}),
          refresh: kind,
          refresh_reason: refresh.reason,
          metrics: { num_output_rows: refresh.rows },
          ...(refresh.dataQuality ? { data_quality: refresh.dataQuality } : {}),
          table_version: refresh.tableVersion,
          duration_ms: refresh.durationMs,
        },
      },
      { dataset_name: view, flow_name: view, flow_id: view },
    );
  }

  /** A flow's end in this task: COMPLETED, or FAILED for good (the update fails with it: `fatal`). */
  flowStatus(
    dataset: string,
    flow: string,
    status: "COMPLETED" | "FAILED",
    details: Readonly<Record<string, unknown>>,
    error?: unknown,
  ): Promise<void> {
    return this.append(
      "flow_progress",
      status === "FAILED" ? "ERROR" : "INFO",
      status === "FAILED" ? `Flow '${flow}' has FAILED` : `Flow '${flow}' is ${status}`,
      { flow_progress: { status, ...details } },
      { dataset_name: dataset, flow_name: flow, flow_id: flow },
      error === undefined ? undefined : eventError(error, true),
    );
  }

  /**
   * A flow's attempt that failed on a transient error the update's task retries (a broker
   * restarting): a warning, not an error, since the update goes on; `retries` says how long it tries.
   */
  flowRetried(dataset: string, flow: string, error: unknown, retries: string): Promise<void> {
    return this.append(
      "flow_progress",
      "WARN",
      `Flow '${flow}' failed on a transient error and will be retried (${retries}; the update fails only if every retry does)`,
      { flow_progress: { status: "FAILED" } },
      { dataset_name: dataset, flow_name: flow, flow_id: flow },
      eventError(error, false),
    );
  }

  warning(
    message: string,
    details: Readonly<Record<string, unknown>>,
    origin: Partial<EventOrigin> = {},
  ): Promise<void> {
    return this.append("warning", "WARN", message, { warning: details }, origin);
  }

  /** Keeps the events appended from now on for `takeHeld`, instead of writing them. */
  hold(): void {
    this.#held ??= [];
  }

  /** The events kept since `hold`, in order, for the caller to write; later ones go out on their own. */
  takeHeld(): NewEvent[] {
    const held = this.#held ?? [];
    this.#held = undefined;
    return held;
  }

  /** Queues `write` after every write queued before it. */
  enqueue(write: () => Promise<unknown>): Promise<void> {
    this.#queue = this.#queue.then(() => this.#settle(write));
    return Promise.resolve();
  }

  /** Waits for every write; throws the first failure. */
  async flush(): Promise<void> {
    await this.#queue;
    while (this.#draining) await this.#draining;
    const failed = this.#firstError;
    this.#firstError = undefined;
    if (failed) throw failed.error;
  }

  private append(
    eventType: string,
    level: EventLevel,
    message: string,
    details: Readonly<Record<string, unknown>>,
    origin: Partial<EventOrigin> = {},
    error?: EventError,
  ): Promise<void> {
    const timestamp = Math.max(this.clock(), this.#lastTimestamp + 1);
    this.#lastTimestamp = timestamp;
    (this.#held ?? this.#pending).push({
      origin: { ...this.origin, ...origin },
      message,
      level,
      event_type: eventType,
      details,
      timestamp,
      ...(error ? { error } : {}),
    });
    if (!this.#held) this.#draining ??= this.#drain();
    return Promise.resolve();
  }

  /** Writes the pending events a batch at a time, until none are left. */
  async #drain(): Promise<void> {
    // The events of this moment (appended before the next turn of the event loop) join the first batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, EVENT_BATCH_SIZE);
      await this.#settle(() => this.events.appendAll(batch));
    }
    this.#draining = undefined;
  }

  /** Runs a write, keeping its failure (the first one) for `flush()` instead of throwing. */
  async #settle(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.#firstError ??= { error };
    }
  }
}

/** Events per `appendAll`: DynamoDB's BatchWriteItem limit. */
const EVENT_BATCH_SIZE = 25;

/** An error and its causes as the event log's exception chain. */
export function eventError(error: unknown, fatal: boolean): EventError {
  const exceptions: { class_name: string; message: string; stack?: string }[] = [];
  for (let current: unknown = error; current !== undefined && exceptions.length < 5;) {
    if (current instanceof Error) {
      exceptions.push({
        class_name: current.name,
        message: current.message,
        ...(current.stack ? { stack: current.stack } : {}),
      });
      current = current.cause;
    } else {
      exceptions.push({ class_name: "Error", message: String(current) });
      current = undefined;
    }
  }
  return { exceptions, fatal };
}

/** Spark's `stateOperators` and `eventTime.watermark`, as a Spark user reads them in progress. */
function stateDetails(state: StateProgress): Record<string, unknown> {
  return {
    state_operators: {
      operator_names: state.operators,
      num_rows_total: state.numRowsTotal,
      state_bytes: state.stateBytes,
      num_rows_dropped_by_watermark: state.numRowsDroppedByWatermark,
      num_duplicates_dropped: state.numDuplicatesDropped,
      num_windows_emitted: state.numWindowsEmitted,
      ...(state.numJoinedRows !== undefined ? { num_joined_rows: state.numJoinedRows } : {}),
      ...(state.numLeftOuterRows !== undefined ? { num_left_outer_rows: state.numLeftOuterRows } : {}),
      state_version: state.version ?? null,
    },
    event_time: { watermark: state.watermark ?? null },
  };
}
