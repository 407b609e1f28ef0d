import type { DuckSession } from "../../duck/duck-session.ts";
import { quoteIdentifier, quoteLiteral } from "../../duck/sql-text.ts";
import type { AddFile } from "../log/actions.ts";
import { JsonNumber, type ExactJson } from "../log/exact-json.ts";
import { parseFileStats } from "../log/stats-json.ts";
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
 * - bounds are read without passing through a double (`parseFileStats`); a `long` bound at or past
 *   2^53 is still widened by 2048 and clamped to the type's range, since writers that did pass it
 *   through a double (Ebb before exact stats, some others) may have rounded it by up to one ulp;
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
    const stats = parseFileStats(file.stats);
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

function typedNull(type: DeltaType): string {
  return `CAST(NULL AS ${duckType(type)})`;
}

function lowerBound(type: DeltaType, value: ExactJson | undefined): string {
  if (value === undefined || value === null) return typedNull(type);
  if (type === "long") return longBound(value, -1n);
  return `CAST(${quoteLiteral(boundText(value))} AS ${duckType(type)})`;
}

function upperBound(type: DeltaType, value: ExactJson | undefined): string {
  if (value === undefined || value === null) return typedNull(type);
  if (type === "long") return longBound(value, 1n);
  if (type === "string" && boundText(value).length >= TRUNCATED_STRING_LENGTH) return typedNull(type);
  const bound = `CAST(${quoteLiteral(boundText(value))} AS ${duckType(type)})`;
  if (type === "timestamp" || type === "timestamp_ntz") return `(${bound} + INTERVAL 1 millisecond)`;
  return bound;
}

function boundText(value: ExactJson): string {
  return value instanceof JsonNumber ? value.text : String(value);
}

const EXACT_IN_DOUBLE = 2n ** 53n;
/** More than one ulp of a double below 2^63 (1024), plus the shortest-print error. */
const DOUBLE_ROUNDING_SLACK = 2048n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** A `long` bound as a BIGINT literal, widened in `direction` when it may have been rounded. */
function longBound(value: ExactJson, direction: -1n | 1n): string {
  const exact = integerOf(boundText(value));
  if (exact === undefined) return typedNull("long");
  const magnitude = exact < 0n ? -exact : exact;
  const widened = magnitude >= EXACT_IN_DOUBLE ? exact + direction * DOUBLE_ROUNDING_SLACK : exact;
  const clamped = widened < LONG_MIN ? LONG_MIN : widened > LONG_MAX ? LONG_MAX : widened;
  return `CAST(${quoteLiteral(clamped.toString())} AS BIGINT)`;
}

/** The integer a JSON number denotes (`9.2e18` included); undefined when it is not one. */
function integerOf(text: string): bigint | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match) return undefined;
  const [, sign, whole, fraction = "", exponentText = "0"] = match;
  const exponent = Number(exponentText) - fraction.length;
  if (Math.abs(exponent) > 400) return undefined;
  let digits = BigInt(whole! + fraction);
  if (exponent >= 0) digits *= 10n ** BigInt(exponent);
  else {
    const divisor = 10n ** BigInt(-exponent);
    if (digits % divisor !== 0n) return undefined;
    digits /= divisor;
  }
  return sign === "-" ? -digits : digits;
}
