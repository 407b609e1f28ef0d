import { describe, expect, it } from "vitest";
import { deltaTypeOf, schemaOfColumns } from "../../../shared/engine/output-schema.ts";

describe("the Delta type of a query's column", () => {
  it("maps DuckDB's scalars, as DESCRIBE writes them", () => {
    expect(deltaTypeOf("BIGINT")).toBe("long");
    expect(deltaTypeOf("TIMESTAMP WITH TIME ZONE")).toBe("timestamp");
    expect(deltaTypeOf("TIMESTAMP")).toBe("timestamp_ntz");
    expect(deltaTypeOf("DECIMAL(18,3)")).toEqual({ type: "decimal", precision: 18, scale: 3 });
    expect(deltaTypeOf("HUGEINT")).toEqual({ type: "decimal", precision: 38, scale: 0 });
  });

  it("nests structs, maps and lists as Delta's struct, map and array", () => {
    const field = (name: string, type: unknown) => ({ name, type, nullable: true, metadata: {} });
    expect(deltaTypeOf('STRUCT("start" TIMESTAMP, "end" TIMESTAMP)')).toEqual({
      type: "struct",
      fields: [field("start", "timestamp_ntz"), field("end", "timestamp_ntz")],
    });
    expect(deltaTypeOf("MAP(VARCHAR, STRUCT(x BIGINT, tags VARCHAR[]))[]")).toEqual({
      type: "array",
      containsNull: true,
      elementType: {
        type: "map",
        keyType: "string",
        valueType: {
          type: "struct",
          fields: [
            field("x", "long"),
            field("tags", { type: "array", elementType: "string", containsNull: true }),
          ],
        },
        valueContainsNull: true,
      },
    });
    expect(deltaTypeOf("INTEGER[3]")).toEqual({ type: "array", elementType: "integer", containsNull: true });
  });

  it("has none for what Delta cannot hold, also nested, and the schema says which column to cast", () => {
    for (const type of [
      "INTERVAL",
      "UNION(a INTEGER, b VARCHAR)",
      "STRUCT(a INTERVAL)",
      "MAP(VARCHAR, TIME)",
      "not a type",
    ])
      expect(deltaTypeOf(type), type).toBeUndefined();
    expect(() => schemaOfColumns([{ name: "span", duckType: "STRUCT(a INTERVAL)" }], "flow f")).toThrow(
      "column span of flow f has DuckDB type STRUCT(a INTERVAL), which a Delta table cannot hold: CAST it (e.g. to VARCHAR)",
    );
  });
});
