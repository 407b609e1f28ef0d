import { describe, expect, it } from "vitest";
import { DeltaTable, InvalidColumnNameError } from "../../../shared/delta/index.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { field, schemaOf } from "./delta-test-kit.ts";

/**
 * Column names Delta cannot store without column mapping (Spark's
 * DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES): refused at create, nested fields included, so Ebb never
 * writes a table Spark refuses to append to.
 */
describe("column names", () => {
  it.each([" ", ",", ";", "{", "}", "(", ")", "\n", "\t", "="])(
    "refuses a column named with %j",
    async (c) => {
      const refused = DeltaTable.create(new MemoryObjectStore(), {
        schema: schemaOf(field("id", "long"), field(`order${c}id`, "string")),
      });
      await expect(refused).rejects.toBeInstanceOf(InvalidColumnNameError);
      await expect(refused).rejects.toMatchObject({ errorCode: "DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES" });
    },
  );

  it("refuses a nested field by its path, and accepts names Delta can hold", async () => {
    const nested = schemaOf(field("id", "long"), field("s", schemaOf(field("a b", "string"))));
    await expect(DeltaTable.create(new MemoryObjectStore(), { schema: nested })).rejects.toThrow(
      /column "s\.a b" has a character/,
    );
    const fine = schemaOf(field("id", "long"), field("Ünïcode-näme.with:dots", "string"));
    await expect(DeltaTable.create(new MemoryObjectStore(), { schema: fine })).resolves.toBeDefined();
  });
});
