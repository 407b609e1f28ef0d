/**
 * The stateful steps a flow runs on its micro-batch before its SQL (plain data): the event-time
 * watermark and cross-batch deduplication. Shared by the flow plans that allow them.
 */

/** Spark's `withWatermark(column, delay)`: rows older than the watermark are late, dropped and counted. */
export interface WatermarkStep {
  readonly column: string;
  /** The delay as written (e.g. "10 minutes"), and in microseconds. */
  readonly delay: string;
  readonly delayMicros: number;
}

/** Spark's `dropDuplicates(keys)` (`within_watermark`: `dropDuplicatesWithinWatermark`). */
export interface DedupStep {
  readonly keys: readonly string[];
  readonly withinWatermark: boolean;
}
