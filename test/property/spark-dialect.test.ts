import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sparkToDuckDb } from "../../shared/sql/spark-to-duckdb.ts";

/**
 * Any text given as Spark SQL either translates or is refused with UNSUPPORTED_SQL (a string or a
 * comment not closed, a function Ebb does not run, text that does not parse): never another error,
 * which validation would answer as INTERNAL_ERROR.
 */

const PIECES = [
  "SELECT",
  " ",
  "a",
  "(",
  ")",
  ",",
  "'x'",
  '"y"',
  "`c`",
  "[",
  "]",
  "0",
  "CAST(",
  " AS INT)",
  "try_cast(",
  "get_json_object(",
  "sha2(",
  "size(",
  "from_json(",
  "'a INT'",
  ":",
  ".",
  "-",
  "+",
  "FROM",
  "t",
  "x -> x",
  "--",
  "/*",
  "*/",
  "\n",
  "named_struct(",
  "concat(",
  "substring_index(",
  "to_date(",
  "'yyyy-MM-dd'",
];

describe("sparkToDuckDb", () => {
  it("translates any text or refuses it with UNSUPPORTED_SQL", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 14 }), (pieces) => {
        const sql = pieces.join("");
        try {
          expect(typeof sparkToDuckDb(sql)).toBe("string");
        } catch (error) {
          expect(
            (error as { errorCode?: string }).errorCode,
            `${JSON.stringify(sql)}: ${String(error)}`,
          ).toBe("UNSUPPORTED_SQL");
        }
      }),
      { numRuns: 2000 },
    );
  });
});
