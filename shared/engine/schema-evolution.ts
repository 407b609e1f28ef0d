import type { DeltaType, StructField, StructType } from "../delta/index.ts";

/**
 * How a streaming table's schema meets a changed query (a deploy that alters a flow's output):
 *
 * - the same columns, or a column the query gives in a narrower numeric type than the table holds
 *   (`INTEGER` into `BIGINT`, `FLOAT` into `DOUBLE`): rows are cast to the table's types, no change;
 * - new columns: additive — the table evolves by a metadata change that appends them as nullable
 *   columns (older rows read NULL);
 * - a table column the query no longer gives (dropped or renamed), or a type the table cannot hold
 *   without losing data (a wider or different type): incompatible — the dataset needs a full
 *   refresh, which recreates the table from the new query — unless the table holds no rows (created
 *   empty by a first update that had no input, or emptied): then nothing is lost, and the table takes
 *   the query's columns as they are.
 * Pure: the engine applies an evolution in the batch's commit, and start-update checks it up front.
 */

export type SchemaEvolution =
  | { readonly kind: "unchanged" }
  | { readonly kind: "additive"; readonly schema: StructType; readonly added: readonly string[] }
  | { readonly kind: "incompatible"; readonly problems: readonly string[] }
  | { readonly kind: "replaced"; readonly schema: StructType };

/** Integer and floating types, narrowest first: a type fits into any later one of its ladder. */
const LADDERS: readonly (readonly string[])[] = [
  ["byte", "short", "integer", "long"],
  ["float", "double"],
];

function typeName(type: DeltaType): string {
  if (typeof type === "string") return type;
  return type.type === "decimal" ? `decimal(${type.precision},${type.scale})` : type.type;
}

/** Whether every value of `from` is a value of `into` (so rows can be cast without loss). */
export function fitsInto(from: DeltaType, into: DeltaType): boolean {
  if (JSON.stringify(from) === JSON.stringify(into)) return true;
  if (typeof from === "string" && typeof into === "string") {
    return LADDERS.some((ladder) => ladder.includes(from) && ladder.indexOf(from) <= ladder.indexOf(into));
  }
  if (
    typeof from !== "string" &&
    typeof into !== "string" &&
    from.type === "decimal" &&
    into.type === "decimal"
  ) {
    return from.scale <= into.scale && from.precision - from.scale <= into.precision - into.scale;
  }
  return false;
}

export function planSchemaEvolution(
  table: StructType,
  query: StructType,
  /** The table holds no rows. */
  empty = false,
): SchemaEvolution {
  const given = new Map(query.fields.map((field) => [field.name, field]));
  const problems: string[] = [];
  for (const field of table.fields) {
    const output = given.get(field.name);
    if (!output) problems.push(`column ${field.name} is no longer produced (dropped or renamed)`);
    else if (!fitsInto(output.type, field.type)) {
      problems.push(
        `column ${field.name} changes type from ${typeName(field.type)} to ${typeName(output.type)}, which the table cannot hold without losing data`,
      );
    }
  }
  if (problems.length > 0 && empty)
    return {
      kind: "replaced",
      schema: { ...query, fields: query.fields.map((f) => ({ ...f, nullable: true })) },
    };
  if (problems.length > 0) return { kind: "incompatible", problems };
  const known = new Set(table.fields.map((field) => field.name));
  const added: StructField[] = query.fields
    .filter((field) => !known.has(field.name))
    .map((field) => ({ ...field, nullable: true }));
  if (added.length === 0) return { kind: "unchanged" };
  return {
    kind: "additive",
    schema: { ...table, fields: [...table.fields, ...added] },
    added: added.map((field) => field.name),
  };
}
