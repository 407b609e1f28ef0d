import type { PipelineEvent } from "../store/event-log-repository.ts";
import type { UpdateRecord } from "../store/updates-repository.ts";

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
}

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
    definition_version: update.definitionVersion,
    last_modified: update.lastModified,
    ...(update.endedAt !== undefined ? { end_time: update.endedAt } : {}),
    ...(update.error
      ? { error: { error_code: update.error.errorCode ?? "INTERNAL_ERROR", message: update.error.message } }
      : {}),
    ...(progress ? { progress } : {}),
  };
}

/** Per-flow progress from an update's `flow_progress` events (oldest first). */
export function flowProgress(events: readonly PipelineEvent[]): Record<string, FlowProgressView> {
  const flows: Record<string, FlowProgressView> = {};
  for (const event of events) {
    const flow = event.origin.flow_name;
    if (event.event_type !== "flow_progress" || flow === undefined) continue;
    const details = (event.details["flow_progress"] ?? {}) as {
      status?: string;
      metrics?: { num_input_rows?: number; num_output_rows?: number };
    };
    const previous = flows[flow] ?? { batches: 0, rows_in: 0, rows_out: 0, status: "RUNNING" };
    const batch = event.origin.batch_id !== undefined;
    flows[flow] = {
      ...(event.origin.dataset_name !== undefined ? { dataset: event.origin.dataset_name } : {}),
      batches: previous.batches + (batch ? 1 : 0),
      rows_in: previous.rows_in + (batch ? (details.metrics?.num_input_rows ?? 0) : 0),
      rows_out: previous.rows_out + (batch ? (details.metrics?.num_output_rows ?? 0) : 0),
      status: details.status ?? previous.status,
    };
  }
  return flows;
}
