import type { DuckSession } from "../../duck/duck-session.ts";
import { quoteIdentifier, quoteLiteral } from "../../duck/sql-text.ts";
import type { AddFile, FileStats } from "../log/actions.ts";
import { partitionValueSql } from "../table/partition-values.ts";
import { duckType, type DeltaType, type ScalarType, type StructType } from "../table/schema.ts";
import type { Snapshot } from "./snapshot.ts";

/**
 * Data skipping for key lookups (MERGE): the live files that may hold a row whose key columns equal
 * some source row's, judged by each file's `minValues` / `maxValues` (PROTOCOL.md "Per-file
 * Statistics") or, for a partition column, its partition value. Only sound bounds are used:
 *
 * - integer, date, string and timestamp keys; float and decimal keys are never pruned on (their JSON
 *   bounds may be rounded);
 * - a string maximum of 32 characters or more may be a truncated prefix (other writers cut at 32),
 *   so it bounds nothing;
 * - timestamp bounds are truncated to milliseconds (the protocol's footnote), so the maximum is
 *   widened by 1 ms;
 * - a missing bound (no stats, an all-null column) bounds nothing. A NULL key matches no row, so a
 *   file whose partition value is null holds no match.
 */

const PRUNABLE: ReadonlySet<string> = new Set([
  "byte",
  "short",
  "integer",
  "long",
  "string",
  "date",
  "timestamp",
  "timestamp_ntz",
]);
const TRUNCATED_STRING_LENGTH = 32;

/** Files of `snapshot` that may match a row of `sourceTable` (a DuckDB table) on `keys`. */
export async function filesMatchingKeys(
  duck: DuckSession,
  snapshot: Snapshot,
  schema: StructType,
  sourceTable: string,
  keys: readonly string[],
): Promise<AddFile[]> {
  const files = [...snapshot.files.values()];
  const keyTypes = keys.map((key) => schema.fields.find((f) => f.name === key)!.type);
  const prunable = keys.filter((_, i) => PRUNABLE.has(String(keyTypes[i])));
  if (files.length === 0 || prunable.length === 0) return files;
  const partitionColumns = snapshot.metadata.partitionColumns;
  const rows = files.map((file, index) => {
    const stats = parseStats(file.stats);
    const bounds = prunable.flatMap((key) => {
      const type = keyTypes[keys.indexOf(key)] as ScalarType;
      if (partitionColumns.includes(key)) {
        const value = partitionValueSql(type, file.partitionValues[key], key);
        return [value, value];
      }
      return [lowerBound(type, stats?.minValues?.[key]), upperBound(type, stats?.maxValues?.[key])];
    });
    return `(${[String(index), ...bounds].join(", ")})`;
  });
  const boundNames = prunable.flatMap((_, i) => [`lo${i}`, `hi${i}`]);
  const conditions = prunable.map((key, i) => {
    const k = `s.${quoteIdentifier(key)}`;
    const nullPartition = partitionColumns.includes(key) ? `f.lo${i} IS NOT NULL AND ` : "";
    return `(${nullPartition}(f.lo${i} IS NULL OR ${k} >= f.lo${i}) AND (f.hi${i} IS NULL OR ${k} <= f.hi${i}))`;
  });
  const candidates = await duck.rows(
    `SELECT f.i FROM (VALUES ${rows.join(", ")}) f(i, ${boundNames.join(", ")}) ` +
      `WHERE EXISTS (SELECT 1 FROM ${sourceTable} s WHERE ${conditions.join(" AND ")})`,
  );
  return candidates.map((row) => files[Number(row.i)]!);
}

function parseStats(stats: string | null | undefined): FileStats | undefined {
  if (!stats) return undefined;
  try {
    return JSON.parse(stats) as FileStats;
  } catch {
    return undefined;
  }
}

function typedNull(type: DeltaType): string {
  return `CAST(NULL AS ${duckType(type)})`;
}

function lowerBound(type: DeltaType, value: unknown): string {
  if (value === undefined || value === null) return typedNull(type);
  return `CAST(${quoteLiteral(String(value))} AS ${duckType(type)})`;
}

function upperBound(type: DeltaType, value: unknown): string {
  if (value === undefined || value === null) return typedNull(type);
  if (type === "string" && String(value).length >= TRUNCATED_STRING_LENGTH) return typedNull(type);
  const bound = `CAST(${quoteLiteral(String(value))} AS ${duckType(type)})`;
  if (type === "timestamp" || type === "timestamp_ntz") return `(${bound} + INTERVAL 1 millisecond)`;
  return bound;
}
