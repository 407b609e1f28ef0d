import { z } from "zod";

/**
 * The shape of a state table: the key columns that identify a row and the value columns it carries,
 * each with its DuckDB type. Operators declare it; the store keeps it in every version and refuses a
 * table opened with another shape (the state would be read wrongly).
 */

const columnSchema = z.object({
  name: z.string().min(1),
  /** A DuckDB type as SQL text: `BIGINT`, `TIMESTAMP`, `VARCHAR[]`, … */
  type: z.string().min(1),
});

export const stateSchemaSchema = z.object({
  key: z.array(columnSchema).min(1),
  value: z.array(columnSchema),
});

export type StateColumn = z.infer<typeof columnSchema>;
export type StateSchema = z.infer<typeof stateSchemaSchema>;

/** The column a changelog row carries to say its key was deleted. */
export const DELETED_COLUMN = "__ebb_deleted";

export function sameSchema(a: StateSchema, b: StateSchema): boolean {
  const same = (x: readonly StateColumn[], y: readonly StateColumn[]) =>
    x.length === y.length &&
    x.every((c, i) => c.name === y[i]?.name && c.type.toUpperCase() === y[i]?.type.toUpperCase());
  return same(a.key, b.key) && same(a.value, b.value);
}

export function describeSchema(schema: StateSchema): string {
  const cols = (cs: readonly StateColumn[]) => cs.map((c) => `${c.name} ${c.type}`).join(", ");
  return `key (${cols(schema.key)}) value (${cols(schema.value)})`;
}

export function allColumns(schema: StateSchema): StateColumn[] {
  return [...schema.key, ...schema.value];
}
