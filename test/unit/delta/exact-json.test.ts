import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JsonNumber } from "../../../shared/delta/log/exact-json.ts";
import { parseExact, stringifyExact, toPlainJson } from "../../../shared/delta/log/exact-json.ts";

describe("JSON with exact numbers", () => {
  it("reads what JSON.parse reads, and writes it back to the same value", () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        const exact = parseExact(text);
        expect(toPlainJson(exact)).toEqual(JSON.parse(text));
        expect(JSON.parse(stringifyExact(exact))).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it("keeps every digit of integers and decimals a double would round", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 38n), max: 10n ** 38n }), fc.nat(38), (unscaled, scale) => {
        const digits = unscaled.toString();
        const text = scale === 0 ? digits : `${digits}.${"7".repeat(scale)}`;
        const parsed = parseExact(`{"v":${text}}`) as { v: JsonNumber };
        expect(parsed.v.text).toBe(text);
        expect(stringifyExact(parsed)).toBe(`{"v":${text}}`);
        expect(stringifyExact({ v: unscaled })).toBe(`{"v":${digits}}`);
      }),
    );
  });

  it("refuses malformed text", () => {
    for (const text of ["", "{", '{"a":}', "[1,]", "01", "-", "1 2", '{"a":1,}', "nul", '"\u0001"']) {
      expect(() => parseExact(text), text).toThrow(SyntaxError);
    }
  });
});
