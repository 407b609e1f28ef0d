import { describe, expect, it } from "vitest";
import { compareBounds } from "../../support/delta-protocol/typed-values.ts";

/**
 * The protocol check orders string bounds as Delta's readers do, by UTF-8 bytes (code points):
 * JavaScript's `<` compares UTF-16 units and puts U+FFFD after U+1F600, which once flagged a correct
 * min/max of a file Ebb wrote as "min above max".
 */
describe("string bounds", () => {
  it("are ordered by code point, not by UTF-16 unit", () => {
    expect(compareBounds("string", "\uFFFD", "\u{1F600}")).toBe(-1);
    expect(compareBounds("string", "\u{1F600}", "\uE000")).toBe(1);
    expect(compareBounds("string", "a", "b")).toBe(-1);
    expect(compareBounds("string", "é", "é")).toBe(0);
  });
});
