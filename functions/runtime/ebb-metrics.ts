import { Metrics } from "@aws-lambda-powertools/metrics";
import { METRIC_NAMESPACE, METRIC_SERVICE } from "../../shared/control/metrics/metric-catalog.ts";
import type { MetricGroup, MetricsSink } from "../../shared/control/metrics/metric-points.ts";
import { logger, writeLogLine } from "./ebb-logger.ts";

/**
 * The metrics port on Lambda (Powertools Metrics): each group one CloudWatch embedded-metric-format line,
 * written where the log's lines go, so CloudWatch Logs turns it into metrics in the `Ebb` namespace
 * with no API call in the task's way. The local runtime routes the log to its file (or nowhere), and
 * the metrics with it. `POWERTOOLS_METRICS_DISABLED=true` turns them off.
 */
class LineMetrics extends Metrics {
  /** The stored metrics as one EMF line (none when disabled), then cleared for the next group. */
  publishTo(write: (line: string) => void): void {
    try {
      if (!this.isDisabled() && this.hasStoredMetrics()) write(JSON.stringify(this.serializeMetrics()));
    } finally {
      this.clearMetrics();
      this.clearDimensions();
      this.clearMetadata();
    }
  }
}

export class PowertoolsMetricsSink implements MetricsSink {
  readonly #metrics = new LineMetrics({
    namespace: METRIC_NAMESPACE,
    serviceName: METRIC_SERVICE,
    // Powertools warns when two dimension sets share a name, as Ebb's do on purpose (a flow's metrics
    // by pipeline and by flow): not worth a log line per metric.
    logger: {
      debug: (...args: unknown[]) => logger.debug(String(args[0])),
      info: (...args: unknown[]) => logger.debug(String(args[0])),
      warn: (...args: unknown[]) => logger.debug(String(args[0])),
      error: (...args: unknown[]) => logger.error(String(args[0])),
    },
  });

  constructor(private readonly write: (line: string) => void = writeLogLine) {}

  record(groups: readonly MetricGroup[]): void {
    const metrics = this.#metrics;
    for (const group of groups) {
      for (const set of group.dimensionSets) {
        metrics.addDimensions(Object.fromEntries(set.map((name) => [name, group.dimensions[name] ?? ""])));
      }
      for (const point of group.metrics) metrics.addMetric(point.name, point.unit, point.value);
      for (const [key, value] of Object.entries(group.properties ?? {})) metrics.addMetadata(key, value);
      metrics.publishTo(this.write);
    }
  }
}
