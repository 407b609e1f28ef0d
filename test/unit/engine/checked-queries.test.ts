import { describe, expect, it } from "vitest";
import { rememberedCheck } from "../../../shared/engine/checked-queries.ts";

describe("rememberedCheck", () => {
  const namespace = { catalog: "main", schema: "sales" };

  it("checks a query once per text and namespace, and answers the first check's text after", async () => {
    let checks = 0;
    const check = async () => `checked ${++checks}`;
    expect(await rememberedCheck("SELECT 1 AS once", namespace, check)).toBe("checked 1");
    expect(await rememberedCheck("SELECT 1 AS once", namespace, check)).toBe("checked 1");
    expect(await rememberedCheck("SELECT 1 AS once", { catalog: "main", schema: "other" }, check)).toBe(
      "checked 2",
    );
    expect(await rememberedCheck("SELECT 1 AS once", undefined, check)).toBe("checked 3");
    expect(checks).toBe(3);
  });

  it("keeps no refusal: a query that failed its check is checked (and refused) again", async () => {
    let checks = 0;
    const refuse = async (): Promise<string> => {
      checks += 1;
      throw new Error("only a SELECT query may run");
    };
    await expect(rememberedCheck("DROP TABLE t", namespace, refuse)).rejects.toThrow(/only a SELECT/);
    await expect(rememberedCheck("DROP TABLE t", namespace, refuse)).rejects.toThrow(/only a SELECT/);
    expect(checks).toBe(2);
  });
});
