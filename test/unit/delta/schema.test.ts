import { describe, expect, it } from "vitest";
import { SchemaError, UnsupportedFeatureError } from "../../../shared/delta/errors.ts";
import { duckType, isScalarType, parseSchema, parseType } from "../../../shared/delta/table/schema.ts";

const field = (name: string, type: unknown) => ({ name, type, nullable: true, metadata: {} });

describe("schema (PROTOCOL.md Schema Serialization Format)", () => {
  it("parses primitives, decimals and nested types", () => {
    const schema = parseSchema(
      JSON.stringify({
        type: "struct",
        fields: [
          field("id", "long"),
          field("amount", "decimal(38,18)"),
          field("tags", { type: "array", elementType: "string", containsNull: false }),
          field("attrs", { type: "map", keyType: "string", valueType: "integer", valueContainsNull: true }),
          field("nested", {
            type: "struct",
            fields: [field("at", "timestamp"), field("ntz", "timestamp_ntz")],
          }),
        ],
      }),
    );
    expect(schema.fields.map((f) => f.name)).toEqual(["id", "amount", "tags", "attrs", "nested"]);
    expect(schema.fields[1]!.type).toEqual({ type: "decimal", precision: 38, scale: 18 });
    expect(schema.fields[2]!.type).toEqual({ type: "array", elementType: "string", containsNull: false });
    expect(isScalarType(schema.fields[1]!.type)).toBe(true);
    expect(isScalarType(schema.fields[4]!.type)).toBe(false);
  });

  it("maps every type to the DuckDB type that holds it", () => {
    const types: [unknown, string][] = [
      ["string", "VARCHAR"],
      ["long", "BIGINT"],
      ["integer", "INTEGER"],
      ["short", "SMALLINT"],
      ["byte", "TINYINT"],
      ["float", "FLOAT"],
      ["double", "DOUBLE"],
      ["boolean", "BOOLEAN"],
      ["binary", "BLOB"],
      ["date", "DATE"],
      ["timestamp", "TIMESTAMPTZ"],
      ["timestamp_ntz", "TIMESTAMP"],
      ["decimal(5,3)", "DECIMAL(5, 3)"],
      [{ type: "array", elementType: "date", containsNull: true }, "DATE[]"],
      [{ type: "map", keyType: "string", valueType: "double" }, "MAP(VARCHAR, DOUBLE)"],
      [{ type: "struct", fields: [field('we"ird', "byte")] }, 'STRUCT("we""ird" TINYINT)'],
    ];
    for (const [json, duck] of types) expect(duckType(parseType(json, "c")), JSON.stringify(json)).toBe(duck);
  });

  it("refuses what it cannot represent, naming the column", () => {
    expect(() => parseType("decimal(40,2)", "price")).toThrow(/column price has an invalid decimal\(40,2\)/);
    expect(() => parseType("interval", "c")).toThrow(SchemaError);
    expect(() => parseType("variant", "v")).toThrow(UnsupportedFeatureError);
    expect(() => parseSchema("{not json")).toThrow(/not valid JSON/);
    expect(() => parseSchema('"long"')).toThrow(/must describe a struct/);
    expect(() => parseType({ type: "struct", fields: [field("a", "nope")] }, "s")).toThrow(/column s\.a/);
  });
});
