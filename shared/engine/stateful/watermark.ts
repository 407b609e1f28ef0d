import { z } from "zod";
import { quoteIdentifier } from "../../duck/sql-text.ts";

/**
 * The event-time watermark of a flow (Spark's semantics, per micro-batch): the newest event time seen
 * so far minus the delay, never moving back. A batch drops the rows older than the watermark the
 * previous batch left (late rows, counted) and then advances it from its own rows; operators let go
 * of state older than the advanced watermark. Pure: the arithmetic and the SQL text.
 */

/** As kept in the state version's meta (epoch microseconds, as DuckDB's `epoch_us`). */
export const watermarkMetaSchema = z.object({ column: z.string(), micros: z.number() });
export type WatermarkMeta = z.infer<typeof watermarkMetaSchema>;

/** The watermark after a batch whose newest event time is `maxEventMicros` (undefined: no rows). */
export function advanceWatermark(
  previous: number | undefined,
  maxEventMicros: number | undefined,
  delayMs: number,
): number | undefined {
  const candidate = maxEventMicros === undefined ? undefined : maxEventMicros - delayMs * 1000;
  if (previous === undefined) return candidate;
  if (candidate === undefined) return previous;
  return Math.max(previous, candidate);
}

/** The event time of a row as a TIMESTAMP (a string or TIMESTAMPTZ column is cast). */
export function eventTimeSql(column: string, alias?: string): string {
  return `CAST(${alias ? `${quoteIdentifier(alias)}.` : ""}${quoteIdentifier(column)} AS TIMESTAMP)`;
}

/**
 * Whether a row is late: before the watermark, or without an event time (it can never be placed in
 * time, so no operator could keep state for it correctly).
 */
export function lateSql(column: string, watermarkMicros: number | undefined): string {
  const time = eventTimeSql(column);
  const before =
    watermarkMicros === undefined ? "false" : `epoch_us(${time}) < ${Math.trunc(watermarkMicros)}`;
  return `(${time} IS NULL OR ${before})`;
}

/** `2026-01-01T00:00:00.000Z` for events and the state reader; undefined stays undefined. */
export function describeWatermark(micros: number | undefined): string | undefined {
  return micros === undefined ? undefined : new Date(Math.floor(micros / 1000)).toISOString();
}
