import type { DeltaType, StructField, StructType } from "../delta/index.ts";
import { QueryError } from "./errors.ts";

/**
 * The Delta schema of a query's output, from DuckDB's `DESCRIBE`: how a streaming table or a
 * materialized view gets its columns on its first write. Every column is nullable (a query's
 * output makes no promise otherwise).
 */

const PRIMITIVES: Readonly<Record<string, DeltaType>> = {
  VARCHAR: "string",
  BIGINT: "long",
  INTEGER: "integer",
  SMALLINT: "short",
  TINYINT: "byte",
  DOUBLE: "double",
  FLOAT: "float",
  BOOLEAN: "boolean",
  BLOB: "binary",
  DATE: "date",
  "TIMESTAMP WITH TIME ZONE": "timestamp",
  TIMESTAMP: "timestamp_ntz",
  // Wider integers go to the narrowest Delta type that holds every value.
  UTINYINT: "short",
  USMALLINT: "integer",
  UINTEGER: "long",
  UBIGINT: { type: "decimal", precision: 20, scale: 0 },
  HUGEINT: { type: "decimal", precision: 38, scale: 0 },
};

/** The Delta type of a DuckDB column type, or undefined when Delta has none. */
export function deltaTypeOf(duckType: string): DeltaType | undefined {
  const type = duckType.trim();
  const primitive = PRIMITIVES[type.toUpperCase()];
  if (primitive) return primitive;
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/i.exec(type);
  if (decimal) return { type: "decimal", precision: Number(decimal[1]), scale: Number(decimal[2]) };
  if (type.endsWith("[]")) {
    const element = deltaTypeOf(type.slice(0, -2));
    return element && { type: "array", elementType: element, containsNull: true };
  }
  return undefined;
}

/** The schema of rows described by DuckDB (`column_name`, `column_type` per column). */
export function schemaOfColumns(
  columns: readonly { readonly name: string; readonly duckType: string }[],
  what: string,
): StructType {
  const fields: StructField[] = columns.map(({ name, duckType }) => {
    const type = deltaTypeOf(duckType);
    if (!type) {
      throw new QueryError(
        `column ${name} of ${what} has DuckDB type ${duckType}, which a Delta table cannot hold: CAST it (e.g. to VARCHAR or a struct-free type)`,
        { data: { column: name, duckType } },
      );
    }
    return { name, type, nullable: true, metadata: {} };
  });
  return { type: "struct", fields };
}
