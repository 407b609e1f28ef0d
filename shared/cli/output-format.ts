import type { Command } from "commander";
import { DecimalText } from "../duck/decimal-text.ts";

/**
 * How the CLI prints rows: an aligned text table for people, one JSON object per line (`--json`) for
 * scripts. Values are rendered the same way in both: bigints and dates become strings a person can read.
 */
export type Row = Readonly<Record<string, unknown>>;

/** One JSON object per row, newline-terminated. */
export function formatJsonLines(rows: readonly Row[]): string {
  return rows.map((row) => JSON.stringify(row, jsonReplacer) + "\n").join("");
}

/** How a table is laid out on a terminal. */
export interface TableLayout {
  /** The columns of text it must fit in: the widest cells are cut (ending in "…"). @default no limit */
  readonly width?: number | undefined;
  /** Columns never cut: ids a person copies into the next command. */
  readonly keep?: readonly string[];
}

/** A cut column keeps at least this many characters. */
const MIN_COLUMN = 8;
const GAP = 2;

/** An aligned table with a header line; columns in first-seen order across all rows. */
export function formatTable(rows: readonly Row[], layout: TableLayout = {}): string {
  if (rows.length === 0) return "(no rows)\n";
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => columns.map((column) => renderCell(row[column])));
  const natural = columns.map((column, i) =>
    Math.max(column.length, ...cells.map((line) => line[i]!.length)),
  );
  const widths = fitWidths(natural, columns, layout);
  const line = (values: readonly string[]) =>
    values
      .map((value, i) => cut(value, widths[i]!).padEnd(widths[i]!))
      .join(" ".repeat(GAP))
      .trimEnd();
  const header = line(columns);
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [header, rule, ...cells.map(line)].join("\n") + "\n";
}

/** Narrows the widest columns not kept, one character at a time, until the line fits (or cannot). */
function fitWidths(natural: readonly number[], columns: readonly string[], layout: TableLayout): number[] {
  const widths = [...natural];
  if (layout.width === undefined) return widths;
  const total = () => widths.reduce((sum, w) => sum + w, 0) + GAP * (widths.length - 1);
  while (total() > layout.width) {
    let widest = -1;
    widths.forEach((w, i) => {
      if (layout.keep?.includes(columns[i]!) || w <= MIN_COLUMN) return;
      if (widest < 0 || w > widths[widest]!) widest = i;
    });
    if (widest < 0) break;
    widths[widest]!--;
  }
  return widths;
}

function cut(value: string, width: number): string {
  return value.length <= width ? value : `${value.slice(0, width - 1)}…`;
}

/** The width tables fit in: `--width`, by default the terminal's (none when printing to a pipe). */
export function tableWidth(command: Pick<Command, "optsWithGlobals">): number | undefined {
  return command.optsWithGlobals<{ width?: number }>().width;
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
