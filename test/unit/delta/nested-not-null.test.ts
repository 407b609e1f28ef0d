import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/index.ts";
import { SchemaMismatchError } from "../../../shared/delta/errors.ts";
import type { StructType } from "../../../shared/delta/table/schema.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { field, schemaOf } from "./delta-test-kit.ts";

/**
 * NOT NULL on a field nested in a struct (Delta's nested NOT NULL): a row whose struct is set but
 * the field is NULL is refused; a NULL struct is fine. Inside arrays and maps Delta does not
 * enforce it, so such a schema is refused at create.
 */

const inner: StructType = schemaOf(field("x", "integer", false), field("y", "string"));
const schema = schemaOf(field("id", "long", false), field("s", inner));

describe("nested NOT NULL", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("refuses a NULL in a NOT NULL field of a set struct, accepts a NULL struct", async () => {
    const table = await DeltaTable.create(
      new MemoryObjectStore(),
      { schema, rows: { sql: "SELECT 1::BIGINT AS id, {'x': 1, 'y': 'a'} AS s" } },
      { duck },
    );
    try {
      const refused = table.append({ sql: "SELECT 2::BIGINT AS id, {'x': NULL::INTEGER, 'y': 'b'} AS s" });
      await expect(refused).rejects.toBeInstanceOf(SchemaMismatchError);
      await expect(refused).rejects.toThrow(/NOT NULL column\(s\) s\.x/);
      await table.append({ sql: "SELECT 3::BIGINT AS id, NULL::STRUCT(x INTEGER, y VARCHAR) AS s" });
      expect((await table.scan()).map((row) => Number(row.id)).sort()).toEqual([1, 3]);
    } finally {
      await table.close();
    }
  });

  it.each([
    ["an array element", { type: "array", elementType: inner, containsNull: true } as const, "a.element.x"],
    [
      "a map value",
      { type: "map", keyType: "string", valueType: inner, valueContainsNull: true } as const,
      "a.value.x",
    ],
  ])("refuses at create a NOT NULL field inside %s", async (_where, type, path) => {
    const refused = DeltaTable.create(new MemoryObjectStore(), {
      schema: schemaOf(field("id", "long"), field("a", type)),
    });
    await expect(refused).rejects.toBeInstanceOf(SchemaMismatchError);
    await expect(refused).rejects.toThrow(
      new RegExp(`field ${path.replaceAll(".", "\\.")} is NOT NULL inside an array or map`),
    );
  });
});
