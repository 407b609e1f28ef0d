import type { DeltaType, StructField, StructType } from "../delta/index.ts";
import { ColumnTypeSyntaxError, parseColumnType, type ColumnType } from "../pipeline/column-type.ts";
import { QueryError } from "./errors.ts";

/**
 * The Delta schema of a query's output, from DuckDB's `DESCRIBE`: how a streaming table or a
 * materialized view gets its columns on its first write. Every column is nullable (a query's
 * output makes no promise otherwise).
 */

/** DuckDB's canonical scalar names (`parseColumnType`'s) → Delta's primitive types. */
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
  TIMESTAMPTZ: "timestamp",
  TIMESTAMP: "timestamp_ntz",
  // Wider integers go to the narrowest Delta type that holds every value.
  UTINYINT: "short",
  USMALLINT: "integer",
  UINTEGER: "long",
  UBIGINT: { type: "decimal", precision: 20, scale: 0 },
  HUGEINT: { type: "decimal", precision: 38, scale: 0 },
};

/** The Delta type of a DuckDB column type (as DESCRIBE writes it), or undefined when Delta has none. */
export function deltaTypeOf(duckType: string): DeltaType | undefined {
  let parsed: ColumnType;
  try {
    parsed = parseColumnType(duckType);
  } catch (error) {
    if (error instanceof ColumnTypeSyntaxError) return undefined;
    throw error;
  }
  return fromColumnType(parsed);
}

/** Structs, maps and lists nest as Delta's struct, map and array (a fixed-size list is an array). */
function fromColumnType(type: ColumnType): DeltaType | undefined {
  switch (type.kind) {
    case "scalar":
      return PRIMITIVES[type.name];
    case "decimal":
      return { type: "decimal", precision: type.precision, scale: type.scale };
    case "list": {
      const element = fromColumnType(type.element);
      return element && { type: "array", elementType: element, containsNull: true };
    }
    case "struct": {
      const fields: StructField[] = [];
      for (const [name, fieldType] of type.fields) {
        const delta = fromColumnType(fieldType);
        if (!delta) return undefined;
        fields.push({ name, type: delta, nullable: true, metadata: {} });
      }
      return { type: "struct", fields };
    }
    case "map": {
      const [key, value] = [fromColumnType(type.key), fromColumnType(type.value)];
      return key && value && { type: "map", keyType: key, valueType: value, valueContainsNull: true };
    }
    case "union":
      return undefined;
  }
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
        `column ${name} of ${what} has DuckDB type ${duckType}, which a Delta table cannot hold: CAST it (e.g. to VARCHAR)`,
        { data: { column: name, duckType } },
      );
    }
    return { name, type, nullable: true, metadata: {} };
  });
  return { type: "struct", fields };
}
