import { InvalidColumnNameError } from "../errors.ts";
import type { DeltaType, StructField } from "./schema.ts";

/**
 * Column names a table without column mapping may hold. Delta stores a column under its name in
 * the Parquet files, and Spark refuses to write a schema whose names hold any of ` ,;{}()\n\t=`
 * (`DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES`) unless column mapping is on; Ebb writes no column
 * mapping, so it refuses them too, nested fields included, rather than write a table Spark cannot
 * append to.
 */
const INVALID_CHARACTERS = /[ ,;{}()\n\t=]/;

/**
 * Throws `InvalidColumnNameError` naming the first field (as a dotted path) with such a name, and
 * the table when `table` is given.
 */
export function assertWritableColumnNames(fields: readonly StructField[], table?: string): void {
  const invalid = firstInvalidName(fields, "");
  if (invalid !== undefined) throw new InvalidColumnNameError(invalid, table ? ` of table ${table}` : "");
}

function firstInvalidName(fields: readonly StructField[], parent: string): string | undefined {
  for (const field of fields) {
    const path = parent === "" ? field.name : `${parent}.${field.name}`;
    if (INVALID_CHARACTERS.test(field.name)) return path;
    const nested = invalidInType(field.type, path);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

function invalidInType(type: DeltaType, path: string): string | undefined {
  if (typeof type === "string") return undefined;
  if (type.type === "struct") return firstInvalidName(type.fields, path);
  if (type.type === "array") return invalidInType(type.elementType, `${path}.element`);
  if (type.type === "map")
    return invalidInType(type.keyType, `${path}.key`) ?? invalidInType(type.valueType, `${path}.value`);
  return undefined;
}
