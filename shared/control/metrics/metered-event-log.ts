import type { EventLogRepository, NewEvent } from "../../store/event-log-repository.ts";
import type { MetricsSink } from "./metric-points.ts";
import { updateMetricsOf } from "./update-metrics.ts";

/**
 * The event log with metrics: each event, once stored, also becomes its metrics (update-metrics.ts),
 * so an update's metrics agree with its event log and a write that failed counts nothing. Events a
 * step writes in one transaction with its state change (`appendWrites`) are counted by that step
 * once the transaction succeeds (`recordEventMetrics`, step-writes.ts).
 */
export function meteredEventLog(events: EventLogRepository, metrics: MetricsSink): EventLogRepository {
  return {
    append: async (event) => {
      const stored = await events.append(event);
      recordEventMetrics(metrics, [event]);
      return stored;
    },
    appendAll: async (batch) => {
      const stored = await events.appendAll(batch);
      recordEventMetrics(metrics, batch);
      return stored;
    },
    appendWrites: (batch) => events.appendWrites(batch),
    get: (pipelineId, id) => events.get(pipelineId, id),
    query: (pipelineId, query, page) => events.query(pipelineId, query, page),
  };
}

/** The metrics of events just stored. A metric that cannot be written never fails the step. */
export function recordEventMetrics(metrics: MetricsSink | undefined, events: readonly NewEvent[]): void {
  if (!metrics) return;
  try {
    metrics.record(events.flatMap(updateMetricsOf));
  } catch {
    // Metrics are an observer: the step's work stands without them.
  }
}
