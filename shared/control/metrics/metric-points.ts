/**
 * Ebb's metrics as plain values, and the port they leave by (architecture.md: I/O behind ports). The
 * control plane says what happened (update-metrics.ts, request-metrics.ts); the adapter on Lambda
 * writes each group as a CloudWatch embedded-metric-format line (functions/runtime/ebb-metrics.ts),
 * and the local runtime sends those lines to its log file, or nowhere.
 */

/** CloudWatch's units, as far as Ebb uses them. */
export type MetricUnit = "Count" | "Milliseconds" | "Seconds" | "Bytes";

/** The dimension names Ebb uses: the same words as the log's fields (operations.md). */
export type DimensionName = "pipeline_id" | "flow" | "route" | "error_code";

/**
 * Metrics that share their dimensions: one EMF line. `dimensionSets` are the combinations CloudWatch
 * aggregates by (each also by `service`, the adapter's default); `[]` is the service-wide total,
 * which the construct's alarms watch. `properties` are searchable in the log but are not dimensions
 * (ids of one update or request: too many to aggregate by).
 */
export interface MetricGroup {
  readonly dimensions: Readonly<Partial<Record<DimensionName, string>>>;
  readonly dimensionSets: readonly (readonly DimensionName[])[];
  readonly metrics: readonly MetricPoint[];
  readonly properties?: Readonly<Record<string, string>>;
}

export interface MetricPoint {
  readonly name: string;
  readonly unit: MetricUnit;
  readonly value: number;
}

/** Where metrics go. */
export interface MetricsSink {
  record(groups: readonly MetricGroup[]): void;
}

/** The sink of a control plane that records none (tests that do not look at metrics). */
export const NO_METRICS: MetricsSink = { record: () => undefined };
