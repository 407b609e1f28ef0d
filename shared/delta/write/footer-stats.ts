import { parquetMetadata, type ColumnChunk, type ParquetParsers } from "hyparquet";
import type { FileStats } from "../log/actions.ts";
import { JsonNumber } from "../log/exact-json.ts";
import type { StatsColumn } from "./file-stats.ts";

/**
 * A written file's stats decoded in process from its footer's bytes (hyparquet), the same stats
 * `parquetStatsQuery` computes with DuckDB from the same footer (file-stats.ts says what they are):
 * a footer query cost 7-16 ms of DuckDB per file on a quiet host, 60-220 ms under load, on the path
 * of every commit. Undefined where this decoding is not proven to agree with the query, and the
 * query runs instead: a decimal column (hyparquet reads its bounds through a double), a date or
 * timestamp bound outside years 1-9999 (DuckDB spells those its own way), a type it did not expect.
 * The property test in test/unit/delta/footer-stats.test.ts holds the two to the same output.
 */

/** Bounds as the footer holds them: dates and timestamps as integers, strings as their bytes. */
const RAW: Partial<ParquetParsers> = {
  timestampFromMilliseconds: (value) => ({ unit: 1n, value }) as unknown as Date,
  timestampFromMicroseconds: (value) => ({ unit: 1000n, value }) as unknown as Date,
  timestampFromNanoseconds: (value) => ({ unit: 1000000n, value }) as unknown as Date,
  dateFromDays: (days) => ({ days }) as unknown as Date,
  stringFromBytes: (bytes) => bytes as unknown as string,
};

const STRING_PREFIX_LENGTH = 32;
const DAY_MS = 86_400_000;

class NotDecodable extends Error {}

export function footerFileStats(footer: Uint8Array, columns: readonly StatsColumn[]): FileStats | undefined {
  if (columns.some((column) => typeof column.type !== "string")) return undefined;
  const metadata = parquetMetadata(footer, { parsers: RAW, geoparquet: false });
  const chunksOf = (name: string): ColumnChunk[] =>
    metadata.row_groups.flatMap((group) =>
      group.columns.filter((chunk) => {
        const path = chunk.meta_data?.path_in_schema;
        return path?.length === 1 && path[0] === name;
      }),
    );
  const minValues: Record<string, unknown> = {};
  const maxValues: Record<string, unknown> = {};
  const nullCount: Record<string, number> = {};
  try {
    for (const column of columns) {
      const chunks = chunksOf(column.name);
      if (chunks.length === 0) continue;
      const stats = chunks.map((chunk) => chunk.meta_data!.statistics);
      if (stats.every((s) => s?.null_count !== undefined))
        nullCount[column.name] = stats.reduce((sum, s) => sum + Number(s!.null_count), 0);
      if (!column.minMax) continue;
      for (const bound of ["min", "max"] as const) {
        const bounds = stats.map((s) => shownBound(s?.[`${bound}_value`]));
        // A chunk without this bound is allowed only when it holds nulls alone.
        const complete = chunks.every(
          (chunk, i) => bounds[i] !== undefined || chunk.meta_data!.num_values === stats[i]?.null_count,
        );
        if (!complete) continue;
        const values = bounds.filter((v) => v !== undefined);
        const value = boundOf(column.type as string, values, bound);
        if (value !== undefined) (bound === "min" ? minValues : maxValues)[column.name] = value;
      }
    }
  } catch (error) {
    if (error instanceof NotDecodable) return undefined;
    throw error;
  }
  const numRecords = metadata.row_groups.reduce((sum, group) => sum + Number(group.num_rows), 0);
  return { numRecords, minValues, maxValues, nullCount };
}

/** A chunk's bound as DuckDB's `parquet_metadata` shows it: an infinite or NaN one as none. */
function shownBound(value: unknown): unknown {
  return typeof value === "number" && !Number.isFinite(value) ? undefined : value;
}

/** The file's bound of a column from its chunks' bounds, in the JSON form `toFileStats` gives. */
function boundOf(type: string, values: readonly unknown[], bound: "min" | "max"): unknown {
  if (values.length === 0) return undefined;
  const pick = <T>(list: readonly T[], compare: (a: T, b: T) => number): T =>
    list.reduce((best, v) => ((bound === "min" ? compare(v, best) < 0 : compare(v, best) > 0) ? v : best));
  switch (type) {
    case "byte":
    case "short":
    case "integer":
      return pick(values.map(expectNumber), (a, b) => a - b);
    case "long":
      return new JsonNumber(
        pick(values.map(expectBigInt), (a, b) => (a < b ? -1 : a > b ? 1 : 0)).toString(),
      );
    case "float":
    case "double": {
      const value = pick(values.map(expectNumber), duckDoubleOrder);
      return Number.isFinite(value) ? value : undefined;
    }
    case "string": {
      const bytes = pick(values.map(expectBytes), (a, b) => Buffer.compare(a, b));
      const chars = [...Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")];
      if (bound === "min") return chars.slice(0, STRING_PREFIX_LENGTH).join("");
      return chars.length <= STRING_PREFIX_LENGTH ? chars.join("") : undefined;
    }
    case "date": {
      const days = pick(values.map(expectDays), (a, b) => a - b);
      return isoText(days * DAY_MS).slice(0, 10);
    }
    case "timestamp":
    case "timestamp_ntz": {
      const ms = pick(values.map(expectMillis), (a, b) => a - b);
      const text = isoText(ms); // yyyy-MM-ddTHH:mm:ss.SSSZ, milliseconds truncated as DuckDB's %g
      return type === "timestamp" ? text : text.slice(0, -1);
    }
    default:
      throw new NotDecodable();
  }
}

/** DuckDB's order of doubles: NaN above +inf, -0.0 equal to 0.0 (the first seen is kept). */
function duckDoubleOrder(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : -1;
  return a - b;
}

function isoText(ms: number): string {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (!(year >= 1 && year <= 9999)) throw new NotDecodable();
  return date.toISOString();
}

function expectNumber(value: unknown): number {
  if (typeof value !== "number") throw new NotDecodable();
  return value;
}

function expectBigInt(value: unknown): bigint {
  if (typeof value !== "bigint") throw new NotDecodable();
  return value;
}

function expectBytes(value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new NotDecodable();
  return value;
}

function expectDays(value: unknown): number {
  const days = (value as { days?: unknown } | undefined)?.days;
  if (typeof days !== "number") throw new NotDecodable();
  return days;
}

/** A timestamp bound in whole milliseconds, rounded down (DuckDB's %g truncates toward the past). */
function expectMillis(value: unknown): number {
  const raw = value as { unit?: unknown; value?: unknown } | undefined;
  if (typeof raw?.unit !== "bigint" || typeof raw.value !== "bigint") throw new NotDecodable();
  const quotient = raw.value / raw.unit;
  const floored = raw.value % raw.unit < 0n ? quotient - 1n : quotient;
  return Number(floored);
}
