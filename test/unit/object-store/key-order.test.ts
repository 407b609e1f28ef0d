import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareKeys } from "../../../shared/object-store/object-key.ts";

/** S3 lists keys in UTF-8 byte order; `compareKeys` compares UTF-16 code units where that agrees. */
describe("compareKeys", () => {
  const bytewise = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
  // Characters from every UTF-8 length, surrogate pairs and the private-use area above them included.
  const char = fc.oneof(
    fc.constantFrom(
      "a",
      "/",
      "0",
      "9",
      "_",
      "\u00e9",
      "\u07ff",
      "\ud7ff",
      "\ue000",
      "\uffff",
      "\u{10000}",
      "\u{1f600}",
    ),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
  );
  const key = fc.array(char, { maxLength: 8 }).map((chars) => chars.join(""));

  it("orders as UTF-8 bytes do, also when one key is a prefix of the other", () => {
    fc.assert(
      fc.property(key, key, key, (prefix, a, b) => {
        expect(Math.sign(compareKeys(prefix + a, prefix + b))).toBe(bytewise(prefix + a, prefix + b));
      }),
      { numRuns: 2000 },
    );
  });

  it("puts a supplementary character after U+E000-U+FFFF, as UTF-8 does (UTF-16 order would not)", () => {
    expect(compareKeys("k\u{1f600}", "k\uffff")).toBeGreaterThan(0);
    expect(compareKeys("k\ue000", "k\u{10000}")).toBeLessThan(0);
  });
});
