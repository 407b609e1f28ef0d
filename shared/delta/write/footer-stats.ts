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

/** A bound this decoder cannot give as the query would: the whole file goes to the query. */
const UNDECODABLE = Symbol("undecodable");

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
      if (value === UNDECODABLE) return undefined;
      if (value !== undefined) (bound === "min" ? minValues : maxValues)[column.name] = value;
    }
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
  const numbers = every(values, (v): v is number => typeof v === "number");
  switch (type) {
    case "byte":
    case "short":
    case "integer":
      return numbers ? pick(numbers, (a, b) => a - b) : UNDECODABLE;
    case "long": {
      const longs = every(values, (v): v is bigint => typeof v === "bigint");
      return longs
        ? new JsonNumber(pick(longs, (a, b) => (a < b ? -1 : a > b ? 1 : 0)).toString())
        : UNDECODABLE;
    }
    case "float":
    case "double": {
      if (!numbers) return UNDECODABLE;
      const value = pick(numbers, duckDoubleOrder);
      return Number.isFinite(value) ? value : undefined;
    }
    case "string": {
      const strings = every(values, (v): v is Uint8Array => v instanceof Uint8Array);
      if (!strings) return UNDECODABLE;
      const bytes = pick(strings, (a, b) => Buffer.compare(a, b));
      const chars = [...Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")];
      if (bound === "min") return chars.slice(0, STRING_PREFIX_LENGTH).join("");
      return chars.length <= STRING_PREFIX_LENGTH ? chars.join("") : undefined;
    }
    case "date": {
      const days = every(
        values,
        (v): v is { days: number } => typeof (v as { days?: unknown }).days === "number",
      );
      return days
        ? (isoText(pick(days, (a, b) => a.days - b.days).days * DAY_MS)?.slice(0, 10) ?? UNDECODABLE)
        : UNDECODABLE;
    }
    case "timestamp":
    case "timestamp_ntz": {
      const raws = every(values, isRawTimestamp);
      if (!raws) return UNDECODABLE;
      // yyyy-MM-ddTHH:mm:ss.SSSZ, milliseconds truncated as DuckDB's %g
      const text = isoText(pick(raws.map(flooredMillis), (a, b) => a - b));
      if (text === undefined) return UNDECODABLE;
      return type === "timestamp" ? text : text.slice(0, -1);
    }
    default:
      return UNDECODABLE;
  }
}

/** `values` as `T[]` when every one is a `T`. */
function every<T>(values: readonly unknown[], guard: (value: unknown) => value is T): T[] | undefined {
  return values.every(guard) ? (values as T[]) : undefined;
}

/** DuckDB's order of doubles: NaN above +inf, -0.0 equal to 0.0 (the first seen is kept). */
function duckDoubleOrder(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : -1;
  return a - b;
}

/** ISO-8601 in UTC of `ms`; undefined outside years 1-9999 (DuckDB spells those its own way). */
function isoText(ms: number): string | undefined {
  const year = new Date(ms).getUTCFullYear();
  return year >= 1 && year <= 9999 ? new Date(ms).toISOString() : undefined;
}

interface RawTimestamp {
  readonly unit: bigint;
  readonly value: bigint;
}

function isRawTimestamp(value: unknown): value is RawTimestamp {
  const raw = value as Partial<RawTimestamp> | undefined;
  return typeof raw?.unit === "bigint" && typeof raw.value === "bigint";
}

/** A timestamp bound in whole milliseconds, rounded down (DuckDB's %g truncates toward the past). */
function flooredMillis(raw: RawTimestamp): number {
  const quotient = raw.value / raw.unit;
  return Number(raw.value % raw.unit < 0n ? quotient - 1n : quotient);
}
