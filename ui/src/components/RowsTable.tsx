import type { ReactNode } from "react";

type Row = Readonly<Record<string, unknown>>;

/** How a column's cells are shown: its CSS class and its text. */
export type CellView = (
  column: string,
  value: unknown,
) => { readonly className: string; readonly text: string };

export interface RowsTableProps {
  readonly rows: readonly Row[];
  /** The table's accessible name. */
  readonly label?: string;
  readonly caption?: ReactNode;
  /** The columns shown, in order. @default every key any row has, first seen first */
  readonly columns?: readonly string[];
  /** A column's heading. @default its name */
  readonly heading?: (column: string) => string;
  /** @default monospace, the value as `formatValue` writes it */
  readonly cell?: CellView;
}

/** Rows of a table, a change feed or a sample, one column per field: the UI's one rows table. */
export function RowsTable({ rows, label, caption, columns, heading, cell = plainCell }: RowsTableProps) {
  const shown = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return (
    <div className="scroll">
      <table className="grid grid-compact" aria-label={label}>
        {caption !== undefined && <caption className="subtle">{caption}</caption>}
        <thead>
          <tr>
            {shown.map((c) => (
              <th key={c}>{heading ? heading(c) : c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {shown.map((c) => {
                const { className, text } = cell(c, row[c]);
                return (
                  <td key={c} className={className}>
                    {text}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const plainCell: CellView = (_column, value) => ({ className: "mono", text: formatValue(value) });

/** A cell's value as text: `null` for a missing one, JSON for a struct, list or map. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return "null";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}
