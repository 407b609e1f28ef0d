import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidKeyError } from "../../../shared/object-store/errors.ts";
import { assertValidKey } from "../../../shared/object-store/object-key.ts";

/** `assertValidKey` refuses a `.` or `..` segment exactly where splitting the key on `/` finds one. */
describe("assertValidKey", () => {
  const key = fc
    .array(fc.constantFrom("a", ".", "..", "/", "...", ".a", "a."), { minLength: 1, maxLength: 8 })
    .map((parts) => parts.join(""));
  const hasDotSegment = (k: string) => k.split("/").some((segment) => segment === "." || segment === "..");

  it("refuses the keys with a dot segment and only those", () => {
    fc.assert(
      fc.property(key, (k) => {
        fc.pre(!k.startsWith("/"));
        const refused = (() => {
          try {
            assertValidKey(k);
            return false;
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidKeyError);
            return true;
          }
        })();
        expect(refused, k).toBe(hasDotSegment(k));
      }),
      { numRuns: 3000 },
    );
  });
});
