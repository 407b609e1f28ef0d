import type { MetricUnit } from "./metric-points.ts";

/**
 * Every metric Ebb emits, by name, with its unit: the one list the emitters, the construct's alarms
 * and dashboard (infra/aws/ebb-monitoring.ts) and operations.md share.
 */
export const METRIC_NAMESPACE = "Ebb";

/** The `service` dimension every metric carries (Powertools' default dimension). */
export const METRIC_SERVICE = "ebb";

export const METRIC = {
  // Per update (update_progress events).
  updatesCompleted: { name: "UpdatesCompleted", unit: "Count" },
  updatesFailed: { name: "UpdatesFailed", unit: "Count" },
  updatesCanceled: { name: "UpdatesCanceled", unit: "Count" },
  updateDuration: { name: "UpdateDuration", unit: "Milliseconds" },
  /** A rewind update failed part-way: its pipeline stays rewind-blocked. */
  rewindsIncomplete: { name: "RewindsIncomplete", unit: "Count" },
  rewinds: { name: "Rewinds", unit: "Count" },
  // Per flow (flow_progress events: a micro-batch, or a materialized view's refresh).
  batches: { name: "Batches", unit: "Count" },
  batchDuration: { name: "BatchDuration", unit: "Milliseconds" },
  recordsIn: { name: "RecordsIn", unit: "Count" },
  recordsOut: { name: "RecordsOut", unit: "Count" },
  bytesWritten: { name: "BytesWritten", unit: "Bytes" },
  /** Records a batch read again after a rewind moved its flow back (replay-frontier.ts). */
  replayedRecords: { name: "ReplayedRecords", unit: "Count" },
  recordsQuarantined: { name: "RecordsQuarantined", unit: "Count" },
  rowsDroppedByExpectations: { name: "RowsDroppedByExpectations", unit: "Count" },
  rowsDroppedByWatermark: { name: "RowsDroppedByWatermark", unit: "Count" },
  /** What the flow's source still holds past the batch: records (Kafka), files (auto_loader). */
  backlogRecords: { name: "BacklogRecords", unit: "Count" },
  backlogFiles: { name: "BacklogFiles", unit: "Count" },
  backlogBytes: { name: "BacklogBytes", unit: "Bytes" },
  /** How old the oldest data the source still holds is: a file's age (auto_loader), MillisBehindLatest (Kinesis). */
  backlogSeconds: { name: "BacklogSeconds", unit: "Seconds" },
  // Per API request.
  requests: { name: "Requests", unit: "Count" },
  requestLatency: { name: "RequestLatency", unit: "Milliseconds" },
  requests4xx: { name: "Requests4xx", unit: "Count" },
  requests5xx: { name: "Requests5xx", unit: "Count" },
} as const satisfies Record<string, { name: string; unit: MetricUnit }>;

export type MetricName = (typeof METRIC)[keyof typeof METRIC]["name"];
