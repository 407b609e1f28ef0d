import type { NewEvent } from "../../store/event-log-repository.ts";
import { timeOfId } from "../../store/time-ordered-id.ts";
import { METRIC } from "./metric-catalog.ts";
import type { MetricGroup, MetricPoint } from "./metric-points.ts";

/**
 * An update's metrics, read off the events it writes to its event log (the one home of what an update
 * did): each terminal `update_progress` counts the update and its duration, each `flow_progress` of a
 * committed batch or a view's refresh counts the flow's records, bytes, drops and backlog, and a
 * `rewind_summary` that was no dry run counts a rewind. Dimensions: the pipeline, and the flow for a
 * flow's metrics; the update's id rides along as a property.
 */
export function updateMetricsOf(event: NewEvent): MetricGroup[] {
  const { pipeline_id: pipelineId, update_id: updateId } = event.origin;
  if (!pipelineId) return [];
  const properties: Record<string, string> = updateId ? { update_id: updateId } : {};
  const details = record(event.details[event.event_type]);
  switch (event.event_type) {
    case "update_progress": {
      const ended = ENDED[String(details["state"])];
      if (!ended || details["execution"] !== undefined) return [];
      const started = updateId ? timeOfId(updateId) : undefined;
      const metrics: MetricPoint[] = [point(ended, 1)];
      if (started !== undefined && event.timestamp !== undefined)
        metrics.push(point(METRIC.updateDuration, Math.max(0, event.timestamp - started)));
      return [{ dimensions: { pipeline_id: pipelineId }, dimensionSets: PIPELINE_SETS, metrics, properties }];
    }
    case "flow_progress": {
      const flow = event.origin.flow_name;
      const metrics = flow === undefined ? [] : flowMetrics(details);
      if (metrics.length === 0) return [];
      return [
        { dimensions: { pipeline_id: pipelineId, flow }, dimensionSets: FLOW_SETS, metrics, properties },
      ];
    }
    case "rewind_summary":
      if (details["dry_run"] !== false) return [];
      return [
        {
          dimensions: { pipeline_id: pipelineId },
          dimensionSets: PIPELINE_SETS,
          metrics: [point(METRIC.rewinds, 1)],
          properties,
        },
      ];
    default:
      return [];
  }
}

/** A rewind update that failed part-way and left its pipeline rewind-blocked (finish-step.ts). */
export function rewindIncompleteMetrics(pipelineId: string, updateId: string): MetricGroup[] {
  return [
    {
      dimensions: { pipeline_id: pipelineId },
      dimensionSets: PIPELINE_SETS,
      metrics: [point(METRIC.rewindsIncomplete, 1)],
      properties: { update_id: updateId },
    },
  ];
}

const PIPELINE_SETS = [[], ["pipeline_id"]] as const;
const FLOW_SETS = [[], ["pipeline_id"], ["pipeline_id", "flow"]] as const;

const ENDED: Readonly<Record<string, (typeof METRIC)[keyof typeof METRIC]>> = {
  COMPLETED: METRIC.updatesCompleted,
  FAILED: METRIC.updatesFailed,
  CANCELED: METRIC.updatesCanceled,
};

/**
 * A committed micro-batch (`batch` present) or a view's refresh (`refresh` present); a flow's
 * COMPLETED or FAILED status carries no new work.
 */
function flowMetrics(progress: Readonly<Record<string, unknown>>): MetricPoint[] {
  const batch = record(progress["batch"]);
  const isBatch = progress["batch"] !== undefined;
  if (!isBatch && progress["refresh"] === undefined) return [];
  const metrics = record(progress["metrics"]);
  const quality = record(progress["data_quality"]);
  const state = record(progress["state_operators"]);
  const points = [
    point(METRIC.batches, 1),
    count(METRIC.recordsIn, metrics["num_input_rows"]),
    count(METRIC.recordsOut, metrics["num_output_rows"]),
    count(METRIC.bytesWritten, metrics["num_output_bytes"]),
    count(METRIC.backlogRecords, metrics["backlog_records"]),
    count(METRIC.replayedRecords, metrics["replayed_records"]),
    count(METRIC.backlogFiles, metrics["backlog_files"]),
    count(METRIC.backlogBytes, metrics["backlog_bytes"]),
    count(METRIC.backlogSeconds, metrics["backlog_seconds"]),
    count(METRIC.recordsQuarantined, quality["quarantined_records"]),
    count(METRIC.rowsDroppedByExpectations, quality["dropped_records"]),
    count(METRIC.rowsDroppedByWatermark, state["num_rows_dropped_by_watermark"]),
    count(METRIC.batchDuration, isBatch ? batch["duration_ms"] : progress["duration_ms"]),
  ];
  return points.filter((p): p is MetricPoint => p !== undefined);
}

function point(metric: { readonly name: string; readonly unit: MetricPoint["unit"] }, value: number) {
  return { name: metric.name, unit: metric.unit, value };
}

/** The metric when the event has the number; absent otherwise (a flow without expectations drops nothing to report). */
function count(metric: Parameters<typeof point>[0], value: unknown): MetricPoint | undefined {
  return typeof value === "number" && Number.isFinite(value) ? point(metric, value) : undefined;
}

function record(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}
