import type { DeltaType, StructField, StructType } from "./schema.ts";

/**
 * A schema back into `metaData.schemaString` (PROTOCOL.md "Schema Serialization Format"): the
 * in-memory types of `schema.ts` mirror the JSON except decimals, which are the string
 * `decimal(p,s)` on the wire.
 */
export function serializeSchema(schema: StructType): string {
  return JSON.stringify(typeJson(schema));
}

function typeJson(type: DeltaType): unknown {
  if (typeof type === "string") return type;
  switch (type.type) {
    case "decimal":
      return `decimal(${type.precision},${type.scale})`;
    case "struct":
      return { type: "struct", fields: type.fields.map(fieldJson) };
    case "array":
      return { type: "array", elementType: typeJson(type.elementType), containsNull: type.containsNull };
    case "map":
      return {
        type: "map",
        keyType: typeJson(type.keyType),
        valueType: typeJson(type.valueType),
        valueContainsNull: type.valueContainsNull,
      };
  }
}

function fieldJson(field: StructField): unknown {
  return {
    name: field.name,
    type: typeJson(field.type),
    nullable: field.nullable,
    metadata: field.metadata ?? {},
  };
}
