import type { JS } from "@duckdb/node-api";
import { quoteLiteral } from "../../duck/sql-text.ts";
import type { FileStats } from "../log/actions.ts";
import { JsonNumber } from "../log/exact-json.ts";
import { duckType, type DeltaType, type StructType } from "../table/schema.ts";

/**
 * Per-file statistics (PROTOCOL.md "Per-file Statistics"): `numRecords`, and `nullCount`,
 * `minValues`, `maxValues` per column, aggregated by DuckDB from the written file's footer.
 *
 * - Like Delta, only the first 32 data columns are indexed (`delta.dataSkippingNumIndexedCols`),
 *   partition columns are not (their value is in `partitionValues`), and nested columns are skipped.
 * - Strings: the minimum is cut to a 32-character prefix (still a lower bound); a maximum longer than
 *   32 characters is left out rather than cut, since a cut maximum is not an upper bound.
 * - Timestamps are written as ISO-8601 in UTC, truncated to milliseconds (the protocol's footnote);
 *   dates as `yyyy-MM-dd`; booleans and binaries get only a null count.
 * - Longs and decimals are exact JSON numbers in the type's own range (`exact-json.ts`): through a
 *   double, a long above 2^53 or a decimal of more than 15 digits would get a bound on the wrong side
 *   of the value, and engines that skip files by stats would skip the file holding the row.
 */

export const INDEXED_COLUMN_LIMIT = 32;
const STRING_PREFIX_LENGTH = 32;

export interface StatsColumn {
  readonly name: string;
  readonly type: DeltaType;
  /** Whether min/max are collected (else only the null count). */
  readonly minMax: boolean;
}

/** The columns a file's stats cover, in schema order. */
export function statsColumns(
  schema: StructType,
  partitionColumns: readonly string[],
  limit: number = INDEXED_COLUMN_LIMIT,
): StatsColumn[] {
  return schema.fields
    .filter((field) => !partitionColumns.includes(field.name) && field.type !== "void")
    .filter((field) => typeof field.type === "string" || field.type.type === "decimal")
    .slice(0, limit)
    .map((field) => ({ name: field.name, type: field.type, minMax: hasMinMax(field.type) }));
}

function hasMinMax(type: DeltaType): boolean {
  if (typeof type !== "string") return type.type === "decimal";
  return !["boolean", "binary", "void"].includes(type);
}

/**
 * A SELECT computing the stats of a parquet file in one row, from its footer: the row-group
 * statistics the parquet writer recorded (`parquet_metadata`), so no data page is decoded. A column
 * whose row groups lack a bound (or a null count) gets none in the file's stats rather than a wrong one.
 */
export function parquetStatsQuery(localPath: string, columns: readonly StatsColumn[]): string {
  // One pass over the footer's rows (one per row group and leaf column), each column's aggregates
  // filtered to its rows: one scalar subquery per aggregate cost ~3 ms each (34 ms for 3 columns).
  const parts = [`sum(row_group_num_rows) FILTER (WHERE column_id = 0) AS n`];
  columns.forEach((column, i) => {
    const mine = `FILTER (WHERE path_in_schema = ${quoteLiteral(column.name)})`;
    parts.push(
      `CASE WHEN bool_and(stats_null_count IS NOT NULL) ${mine} THEN sum(stats_null_count) ${mine} END AS nulls_${i}`,
    );
    if (!column.minMax) return;
    const complete = (bound: string) =>
      `bool_and(stats_${bound}_value IS NOT NULL OR num_values = coalesce(stats_null_count, -1)) ${mine}`;
    for (const bound of ["min", "max"] as const) {
      const value = statValue(
        column.type,
        `${bound}(TRY_CAST(stats_${bound}_value AS ${duckType(column.type)})) ${mine}`,
        bound,
      );
      parts.push(`CASE WHEN ${complete(bound)} THEN ${value} END AS ${bound}_${i}`);
    }
  });
  return `SELECT ${parts.join(", ")} FROM parquet_metadata(${quoteLiteral(localPath)})`;
}

function statValue(type: DeltaType, expr: string, bound: "min" | "max"): string {
  if (typeof type !== "string") return `CAST(${expr} AS VARCHAR)`; // decimal: its exact digits
  switch (type) {
    case "string":
      return bound === "min"
        ? `left(${expr}, ${STRING_PREFIX_LENGTH})`
        : `CASE WHEN length(${expr}) <= ${STRING_PREFIX_LENGTH} THEN ${expr} END`;
    case "date":
      return `strftime(${expr}, '%Y-%m-%d')`;
    case "timestamp":
      return `strftime(timezone('UTC', ${expr}), '%Y-%m-%dT%H:%M:%S.%gZ')`;
    case "timestamp_ntz":
      return `strftime(${expr}, '%Y-%m-%dT%H:%M:%S.%g')`;
    case "float":
    case "double":
      return `CASE WHEN isfinite(${expr}) THEN CAST(${expr} AS DOUBLE) END`;
    default:
      return expr;
  }
}

/** The stats of the row `statsQuery` returned. */
export function toFileStats(row: Readonly<Record<string, JS>>, columns: readonly StatsColumn[]): FileStats {
  const minValues: Record<string, unknown> = {};
  const maxValues: Record<string, unknown> = {};
  const nullCount: Record<string, number> = {};
  columns.forEach((column, i) => {
    const nulls = row[`nulls_${i}`];
    if (nulls !== null && nulls !== undefined) nullCount[column.name] = Number(nulls);
    if (!column.minMax) return;
    const min = jsonValue(row[`min_${i}`], column.type);
    const max = jsonValue(row[`max_${i}`], column.type);
    if (min !== null) minValues[column.name] = min;
    if (max !== null) maxValues[column.name] = max;
  });
  return { numRecords: Number(row.n ?? 0), minValues, maxValues, nullCount };
}

function jsonValue(value: JS | undefined, type: DeltaType): string | number | JsonNumber | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return new JsonNumber(value.toString());
  if (typeof type !== "string") return new JsonNumber(decimalNumberText(String(value)));
  if (typeof value === "number" || typeof value === "string") return value;
  return String(value);
}

/** DuckDB's text of a decimal as a JSON number: `-.9` (a decimal(1,1)) has no leading digit. */
function decimalNumberText(text: string): string {
  return text.replace(/^(-?)\./, "$10.");
}
