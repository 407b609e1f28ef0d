import type { StateSchema } from "../../state/index.ts";
import { JOIN_MATCHED, JOIN_ROW, JOIN_SEQ } from "./stream-join.ts";
import type { NamedStateRows } from "./window-state-rows.ts";

/**
 * A stream-stream join side's state rows for the state reader, under names for people: the key is
 * `batch` (the checkpoint seq the row arrived in) and `row` (its place in that batch, from 1), the
 * value the side's own columns and, on the left, `matched` (whether a right row met it yet). A user
 * column with one of those names keeps the engine's name beside it, so no column hides another. Pure.
 */
export function joinStateRows(schema: StateSchema): NamedStateRows {
  const taken = new Set(schema.value.map((column) => column.name).filter((name) => name !== JOIN_MATCHED));
  const shown = (engine: string, name: string) => (taken.has(name) ? engine : name);
  const names = new Map([
    [JOIN_SEQ, shown(JOIN_SEQ, "batch")],
    [JOIN_ROW, shown(JOIN_ROW, "row")],
    [JOIN_MATCHED, shown(JOIN_MATCHED, "matched")],
  ]);
  const rename = (column: { readonly name: string; readonly type: string }) => ({
    ...column,
    name: names.get(column.name) ?? column.name,
  });
  const pick = (columns: StateSchema["key"]) => (row: Readonly<Record<string, unknown>>) =>
    Object.fromEntries(columns.map((column) => [names.get(column.name) ?? column.name, row[column.name]]));
  return {
    keyColumns: schema.key.map(rename),
    valueColumns: schema.value.map(rename),
    key: pick(schema.key),
    value: pick(schema.value),
  };
}
