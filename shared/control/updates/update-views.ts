import { z } from "zod";
import type { PipelineEvent } from "../../store/event-log-repository.ts";
import type { UpdateRecord } from "../../store/updates-repository.ts";
import { intentOf, orderedRunDetails } from "./update-intent.ts";

/**
 * Updates as the API answers them (api.md "Updates"): Databricks' `UpdateInfo` fields plus Ebb's
 * `refresh`, `reset_mode`, `rewind_spec`, `definition_version`, `error` and per-flow `progress`. Pure.
 */

export interface FlowProgressView {
  readonly dataset?: string;
  readonly batches: number;
  readonly rows_in: number;
  readonly rows_out: number;
  /** RUNNING while batches commit; COMPLETED once caught up; FAILED. */
  readonly status: string;
  /**
   * A materialized view: how its latest refresh went (`INCREMENTAL`, from the rows its input gained,
   * or `FULL_RECOMPUTE`); `rows_out` then counts the rows the refresh wrote, `batches` stays 0.
   */
  readonly refresh?: string;
  /**
   * A stateful flow's operators (Spark's `stateOperators`): the state after its latest batch, what
   * this update's batches dropped (late, duplicate), emitted (windows) and joined, and the watermark.
   */
  readonly state?: FlowStateProgressView;
}

export interface FlowStateProgressView {
  /** Spark's `operatorName` of each operator the flow ran (`dedupe`, `stateStoreSave`, …). */
  readonly operator_names: readonly string[];
  readonly num_rows_total: number;
  readonly state_bytes: number;
  readonly num_rows_dropped_by_watermark: number;
  readonly num_duplicates_dropped: number;
  readonly num_windows_emitted: number;
  /** A stream-stream join: the pairs written, and the unmatched left rows written (LEFT OUTER). */
  readonly num_joined_rows?: number;
  readonly num_left_outer_rows?: number;
  readonly watermark: string | null;
}

/**
 * The stateful part of a batch's `flow_progress` (event-recorder.ts writes it). Fields added later
 * are optional: events written before them still read.
 */
const batchStateSchema = z.object({
  state_operators: z.object({
    operator_names: z.array(z.string()).optional(),
    num_rows_total: z.number(),
    state_bytes: z.number(),
    num_rows_dropped_by_watermark: z.number(),
    num_duplicates_dropped: z.number(),
    num_windows_emitted: z.number().optional(),
    num_joined_rows: z.number().optional(),
    num_left_outer_rows: z.number().optional(),
  }),
  event_time: z.object({ watermark: z.string().nullable() }),
});

export function updateInfo(update: UpdateRecord, progress?: Readonly<Record<string, FlowProgressView>>) {
  const request = update.request as Record<string, unknown>;
  const pick = (field: string) => (request[field] === undefined ? {} : { [field]: request[field] });
  return {
    update_id: update.updateId,
    pipeline_id: update.pipelineId,
    state: update.state,
    cause: update.cause,
    creation_time: update.createdAt,
    mode: (request["mode"] as string | undefined) ?? "DEFAULT",
    full_refresh: request["full_refresh"] === true,
    ...pick("full_refresh_selection"),
    ...pick("refresh_selection"),
    validate_only: request["validate_only"] === true,
    ...pick("refresh"),
    ...pick("selection"),
    ...pick("reset_mode"),
    ...pick("reset_checkpoint_selection"),
    ...pick("rewind_spec"),
    ...branchOf(update),
    ...pick("publish"),
    ...orderedRunOf(update),
    ...cutOf(update),
    ...pick("engine"),
    definition_version: update.definitionVersion,
    last_modified: update.lastModified,
    ...(update.endedAt !== undefined ? { end_time: update.endedAt } : {}),
    ...(update.error
      ? { error: { error_code: update.error.errorCode ?? "INTERNAL_ERROR", message: update.error.message } }
      : {}),
    ...(progress ? { progress } : {}),
  };
}

/** The branch a run ran on (docs/branches.md), when it ran on one. */
function branchOf(update: UpdateRecord) {
  const intent = intentOf(update);
  return intent.kind === "run" && intent.branch !== undefined ? { branch: intent.branch } : {};
}

/** The run's place in an ordered run of several pipelines, when it has one. */
function orderedRunOf(update: UpdateRecord) {
  const intent = intentOf(update);
  return intent.kind === "run" && intent.orderedRun
    ? { ordered_run: orderedRunDetails(intent.orderedRun) }
    : {};
}

/** The cut across pipelines a rewind is one of, when it is. */
function cutOf(update: UpdateRecord) {
  const intent = intentOf(update);
  return intent.kind === "rewind" && intent.cutRequestId ? { cut: { request_id: intent.cutRequestId } } : {};
}

/** Per-flow progress from an update's `flow_progress` events (oldest first). */
export function flowProgress(events: readonly PipelineEvent[]): Record<string, FlowProgressView> {
  const flows: Record<string, FlowProgressView> = {};
  for (const event of events) {
    const flow = event.origin.flow_name;
    if (event.event_type !== "flow_progress" || flow === undefined) continue;
    const details = (event.details["flow_progress"] ?? {}) as {
      status?: string;
      refresh?: string;
      metrics?: { num_input_rows?: number; num_output_rows?: number };
    };
    const previous: FlowProgressView = flows[flow] ?? {
      batches: 0,
      rows_in: 0,
      rows_out: 0,
      status: "RUNNING",
    };
    const batch = event.origin.batch_id !== undefined;
    // A view's refresh is one event with no batch: its rows count like a batch's.
    const counted = batch || details.refresh !== undefined;
    const stateful = batch ? batchStateSchema.safeParse(event.details["flow_progress"]) : undefined;
    const state = stateful?.success ? stateProgress(previous.state, stateful.data) : previous.state;
    const refresh = details.refresh ?? previous.refresh;
    flows[flow] = {
      ...(event.origin.dataset_name !== undefined ? { dataset: event.origin.dataset_name } : {}),
      batches: previous.batches + (batch ? 1 : 0),
      rows_in: previous.rows_in + (counted ? (details.metrics?.num_input_rows ?? 0) : 0),
      rows_out: previous.rows_out + (counted ? (details.metrics?.num_output_rows ?? 0) : 0),
      status: details.status ?? previous.status,
      ...(refresh !== undefined ? { refresh } : {}),
      ...(state ? { state } : {}),
    };
  }
  return flows;
}

/** A flow's state after one more batch: the state and watermark as the batch left them, counts summed. */
function stateProgress(
  previous: FlowStateProgressView | undefined,
  batch: z.infer<typeof batchStateSchema>,
): FlowStateProgressView {
  const figures = batch.state_operators;
  const sum = (name: "num_joined_rows" | "num_left_outer_rows") =>
    figures[name] === undefined && previous?.[name] === undefined
      ? {}
      : { [name]: (previous?.[name] ?? 0) + (figures[name] ?? 0) };
  return {
    operator_names: [...new Set([...(previous?.operator_names ?? []), ...(figures.operator_names ?? [])])],
    num_rows_total: figures.num_rows_total,
    state_bytes: figures.state_bytes,
    num_rows_dropped_by_watermark:
      (previous?.num_rows_dropped_by_watermark ?? 0) + figures.num_rows_dropped_by_watermark,
    num_duplicates_dropped: (previous?.num_duplicates_dropped ?? 0) + figures.num_duplicates_dropped,
    num_windows_emitted: (previous?.num_windows_emitted ?? 0) + (figures.num_windows_emitted ?? 0),
    ...sum("num_joined_rows"),
    ...sum("num_left_outer_rows"),
    watermark: batch.event_time.watermark,
  };
}
