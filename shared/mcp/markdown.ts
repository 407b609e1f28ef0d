/**
 * Answers in Markdown, which every MCP client shows well: tables of rows, values rendered as a person
 * reads them.
 */

export type Row = Readonly<Record<string, unknown>>;

/** A Markdown table, columns in first-seen order; `(none)` for no rows. */
export function markdownTable(rows: readonly Row[]): string {
  if (rows.length === 0) return "(none)";
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [
    line(columns),
    line(columns.map(() => "---")),
    ...rows.map((row) => line(columns.map((column) => cell(row[column])))),
  ].join("\n");
}

export function cell(value: unknown): string {
  const text =
    value === null || value === undefined
      ? ""
      : typeof value === "string"
        ? value
        : typeof value === "number" || typeof value === "boolean" || typeof value === "bigint"
          ? String(value)
          : JSON.stringify(value);
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/** An epoch-milliseconds time as ISO-8601 UTC, the zone always shown. */
export function utc(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
