import type { SchemaType } from "./typed-values.ts";

/** A field of the schema JSON (PROTOCOL.md "Struct Field"). */
export interface SchemaField {
  readonly name: string;
  readonly type: SchemaType;
  readonly nullable: boolean;
  readonly metadata: Readonly<Record<string, unknown>>;
}

const PRIMITIVES = new Set([
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
  "variant",
]);

/** Problems with the schema JSON's shape; an empty list when it is well formed. */
export function schemaProblems(schema: unknown): string[] {
  const problems: string[] = [];
  const checkType = (type: unknown, where: string): void => {
    if (typeof type === "string") {
      if (!PRIMITIVES.has(type) && !/^decimal\(\d+,\s*\d+\)$/.test(type))
        problems.push(`${where}: unknown type ${type}`);
      return;
    }
    if (typeof type !== "object" || type === null)
      return void problems.push(`${where}: type is not a string or object`);
    const node = type as Record<string, unknown>;
    if (node.type === "struct") checkStruct(node, where);
    else if (node.type === "array") {
      if (typeof node.containsNull !== "boolean") problems.push(`${where}: array without containsNull`);
      checkType(node.elementType, `${where}.element`);
    } else if (node.type === "map") {
      if (typeof node.valueContainsNull !== "boolean")
        problems.push(`${where}: map without valueContainsNull`);
      checkType(node.keyType, `${where}.key`);
      checkType(node.valueType, `${where}.value`);
    } else problems.push(`${where}: unknown type ${JSON.stringify(node.type)}`);
  };
  const checkStruct = (node: Record<string, unknown>, where: string): void => {
    if (!Array.isArray(node.fields)) return void problems.push(`${where}: struct without fields`);
    const names = new Set<string>();
    for (const field of node.fields as unknown[]) {
      const f = (field ?? {}) as Record<string, unknown>;
      if (typeof f.name !== "string") {
        problems.push(`${where}: a field without a name`);
        continue;
      }
      const path = where === "" ? f.name : `${where}.${f.name}`;
      if (names.has(f.name.toLowerCase())) problems.push(`${path}: duplicate column name`);
      names.add(f.name.toLowerCase());
      if (typeof f.nullable !== "boolean") problems.push(`${path}: nullable is not a boolean`);
      if (typeof f.metadata !== "object" || f.metadata === null)
        problems.push(`${path}: metadata is not an object`);
      checkType(f.type, path);
    }
  };
  if (typeof schema !== "object" || schema === null || (schema as { type?: unknown }).type !== "struct") {
    return ["the schema is not a struct"];
  }
  checkStruct(schema as Record<string, unknown>, "");
  return problems;
}

/** The top-level fields of a well-formed schema. */
export function topFields(schema: unknown): SchemaField[] {
  return ((schema as { fields?: SchemaField[] }).fields ?? []).filter((f) => typeof f?.name === "string");
}

/** Every field, nested ones included (inside structs, arrays and maps), with its dotted path. */
export function* allFields(fields: readonly SchemaField[], parent = ""): Generator<[string, SchemaField]> {
  for (const field of fields) {
    const path = parent === "" ? field.name : `${parent}.${field.name}`;
    yield [path, field];
    yield* nested(field.type, path);
  }
}

function* nested(type: SchemaType, path: string): Generator<[string, SchemaField]> {
  if (typeof type === "string") return;
  if (type.type === "struct") yield* allFields(type.fields as SchemaField[], path);
  else if (type.type === "array") yield* nested(type.elementType as SchemaType, `${path}.element`);
  else if (type.type === "map") {
    yield* nested(type.keyType as SchemaType, `${path}.key`);
    yield* nested(type.valueType as SchemaType, `${path}.value`);
  }
}

/** Every type used anywhere in the schema. */
export function* allTypes(fields: readonly SchemaField[]): Generator<SchemaType> {
  const walk = function* (type: SchemaType): Generator<SchemaType> {
    yield type;
    if (typeof type === "string") return;
    if (type.type === "struct") for (const f of type.fields as SchemaField[]) yield* walk(f.type);
    else if (type.type === "array") yield* walk(type.elementType as SchemaType);
    else if (type.type === "map") {
      yield* walk(type.keyType as SchemaType);
      yield* walk(type.valueType as SchemaType);
    }
  };
  for (const field of fields) yield* walk(field.type);
}
