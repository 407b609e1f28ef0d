import { DecimalText } from "../../duck/answer-values.ts";

/**
 * DuckDB values as JSON (rows of history, changes and queries): BIGINT and DECIMAL as a number when
 * it is exact, else as text; timestamps and dates as ISO-8601; bytes as base64; lists, structs and
 * maps (an object) recursively.
 */
export function toJsonValue(value: unknown): unknown {
  if (value instanceof DecimalText) return value.toJSON();
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value instanceof Map)
    return Object.fromEntries([...value].map(([k, v]) => [String(k), toJsonValue(v)]));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonValue(v)]));
  }
  return value;
}

export function toJsonRows(rows: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((row) => toJsonValue(row) as Record<string, unknown>);
}
