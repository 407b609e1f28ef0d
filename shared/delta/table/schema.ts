import { quoteIdentifier } from "../../duck/sql-text.ts";
import { SchemaError, UnsupportedFeatureError } from "../errors.ts";

/**
 * The table schema, parsed from `metaData.schemaString` (PROTOCOL.md "Schema Serialization
 * Format"). Types mirror the JSON: a primitive is its name, `decimal(p,s)` is parsed into precision
 * and scale, and struct / array / map keep their JSON field names.
 */
export const PRIMITIVE_TYPES = [
  "string",
  "long",
  "integer",
  "short",
  "byte",
  "float",
  "double",
  "boolean",
  "binary",
  "date",
  "timestamp",
  "timestamp_ntz",
  "void",
] as const;
export type PrimitiveType = (typeof PRIMITIVE_TYPES)[number];

export interface DecimalType {
  readonly type: "decimal";
  readonly precision: number;
  readonly scale: number;
}

export interface StructField {
  readonly name: string;
  readonly type: DeltaType;
  readonly nullable: boolean;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export interface StructType {
  readonly type: "struct";
  readonly fields: readonly StructField[];
}

export interface ArrayType {
  readonly type: "array";
  readonly elementType: DeltaType;
  readonly containsNull: boolean;
}

export interface MapType {
  readonly type: "map";
  readonly keyType: DeltaType;
  readonly valueType: DeltaType;
  readonly valueContainsNull: boolean;
}

export type DeltaType = PrimitiveType | DecimalType | StructType | ArrayType | MapType;

/** Types a partition column may have: every primitive and decimal (PROTOCOL.md "Partition Value Serialization"). */
export type ScalarType = PrimitiveType | DecimalType;

const DECIMAL = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/;
const MAX_DECIMAL_PRECISION = 38;

/** Parses `metaData.schemaString`; the top level is always a struct. */
export function parseSchema(schemaString: string): StructType {
  let json: unknown;
  try {
    json = JSON.parse(schemaString);
  } catch (cause) {
    throw new SchemaError(`schemaString is not valid JSON`, { cause });
  }
  const type = parseType(json, "schema");
  if (typeof type !== "object" || type.type !== "struct") {
    throw new SchemaError(`schemaString must describe a struct`);
  }
  return type;
}

/** Parses one type as it appears in the schema JSON. `where` names the column path for errors. */
export function parseType(json: unknown, where: string): DeltaType {
  if (typeof json === "string") {
    if ((PRIMITIVE_TYPES as readonly string[]).includes(json)) return json as PrimitiveType;
    if (json === "decimal") return { type: "decimal", precision: 10, scale: 0 };
    const m = DECIMAL.exec(json);
    if (m) return decimalType(Number(m[1]), Number(m[2]), where);
    if (json === "variant") throw new UnsupportedFeatureError("variantType", `column ${where} is a variant`);
    throw new SchemaError(`column ${where} has unknown type ${JSON.stringify(json)}`);
  }
  if (typeof json !== "object" || json === null) {
    throw new SchemaError(`column ${where} has an invalid type ${JSON.stringify(json)}`);
  }
  const node = json as Record<string, unknown>;
  switch (node.type) {
    case "struct": {
      if (!Array.isArray(node.fields)) throw new SchemaError(`struct ${where} has no fields array`);
      return { type: "struct", fields: node.fields.map((field) => parseField(field, where)) };
    }
    case "array":
      return {
        type: "array",
        elementType: parseType(node.elementType, `${where}[]`),
        containsNull: node.containsNull !== false,
      };
    case "map":
      return {
        type: "map",
        keyType: parseType(node.keyType, `${where}.key`),
        valueType: parseType(node.valueType, `${where}.value`),
        valueContainsNull: node.valueContainsNull !== false,
      };
    default:
      throw new SchemaError(`column ${where} has unknown type ${JSON.stringify(node.type)}`);
  }
}

function parseField(json: unknown, parent: string): StructField {
  if (typeof json !== "object" || json === null)
    throw new SchemaError(`a field of ${parent} is not an object`);
  const field = json as Record<string, unknown>;
  if (typeof field.name !== "string") throw new SchemaError(`a field of ${parent} has no name`);
  const where = parent === "schema" ? field.name : `${parent}.${field.name}`;
  return {
    name: field.name,
    type: parseType(field.type, where),
    nullable: field.nullable !== false,
    metadata: (field.metadata as Record<string, unknown> | undefined) ?? {},
  };
}

function decimalType(precision: number, scale: number, where: string): DecimalType {
  if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale > precision) {
    throw new SchemaError(`column ${where} has an invalid decimal(${precision},${scale})`);
  }
  return { type: "decimal", precision, scale };
}

/** True for types that are not struct, array or map. */
export function isScalarType(type: DeltaType): type is ScalarType {
  return typeof type === "string" || type.type === "decimal";
}

/** The DuckDB SQL type that holds values of `type` exactly. */
export function duckType(type: DeltaType): string {
  if (typeof type === "string") return DUCK_PRIMITIVES[type];
  switch (type.type) {
    case "decimal":
      return `DECIMAL(${type.precision}, ${type.scale})`;
    case "struct":
      return `STRUCT(${type.fields.map((f) => `${quoteIdentifier(f.name)} ${duckType(f.type)}`).join(", ")})`;
    case "array":
      return `${duckType(type.elementType)}[]`;
    case "map":
      return `MAP(${duckType(type.keyType)}, ${duckType(type.valueType)})`;
  }
}

const DUCK_PRIMITIVES: Readonly<Record<PrimitiveType, string>> = {
  string: "VARCHAR",
  long: "BIGINT",
  integer: "INTEGER",
  short: "SMALLINT",
  byte: "TINYINT",
  float: "FLOAT",
  double: "DOUBLE",
  boolean: "BOOLEAN",
  binary: "BLOB",
  date: "DATE",
  // Delta `timestamp` is an instant (isAdjustedToUTC = true); `timestamp_ntz` is a wall-clock time.
  timestamp: "TIMESTAMPTZ",
  timestamp_ntz: "TIMESTAMP",
  // A column that is never materialized (PROTOCOL.md "Void Type"); read as all-null.
  void: "VARCHAR",
};
