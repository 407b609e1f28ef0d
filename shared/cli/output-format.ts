import { DecimalText } from "../duck/answer-values.ts";

/**
 * How the CLI prints rows: an aligned text table for people, one JSON object per line (`--json`) for
 * scripts. Values are rendered the same way in both: bigints and dates become strings a person can read.
 */
export type Row = Readonly<Record<string, unknown>>;

/** One JSON object per row, newline-terminated. */
export function formatJsonLines(rows: readonly Row[]): string {
  return rows.map((row) => JSON.stringify(row, jsonReplacer) + "\n").join("");
}

/** An aligned table with a header line; columns in first-seen order across all rows. */
export function formatTable(rows: readonly Row[]): string {
  if (rows.length === 0) return "(no rows)\n";
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => columns.map((column) => renderCell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const header = line(columns);
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [header, rule, ...cells.map(line)].join("\n") + "\n";
}

export function renderCell(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "string") return value;
  if (typeof value === "bigint" || typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof DecimalText) return value.text;
  return JSON.stringify(value, jsonReplacer);
}

function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") {
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), v]));
  return value;
}
