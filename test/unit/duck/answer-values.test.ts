import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withDuckSession } from "../../../shared/duck/duck-session.ts";

/** Times as an answer hands them to a user: every microsecond, and a DATE as the date it is. */
describe("answer values: dates and timestamps", () => {
  it("a TIMESTAMP or TIMESTAMPTZ is its UTC ISO text to the microsecond, as DuckDB prints it", async () => {
    await withDuckSession(async (duck) => {
      await duck.run("SET TimeZone = 'UTC'");
      // Years 1000 to 9999, before and after the epoch.
      const micros = fc.bigInt({ min: -30_610_224_000_000_000n, max: 253_402_300_799_999_999n });
      await fc.assert(
        fc.asyncProperty(micros, async (m) => {
          const [row] = await duck.answerRows(
            `SELECT make_timestamp(${m}) AS ntz, make_timestamp(${m})::TIMESTAMPTZ AS tz, ` +
              `strftime(make_timestamp(${m}), '%Y-%m-%dT%H:%M:%S.%f') AS duck`,
          );
          const sixDigits = (text: unknown) => String(text).replace(/\.(\d{3})Z$/, ".$1000Z");
          expect(sixDigits(row!["ntz"])).toBe(`${String(row!["duck"])}Z`);
          expect(row!["tz"]).toBe(row!["ntz"]);
        }),
        { numRuns: 200 },
      );
    });
  });

  it("keeps milliseconds as Date.toISOString writes them, and a DATE as its date", async () => {
    await withDuckSession(async (duck) => {
      const [row] = await duck.answerRows(
        "SELECT TIMESTAMP '2026-01-02 03:04:05.678' AS ms, TIMESTAMP '1969-12-31 23:59:59.999999' AS before, " +
          "DATE '2026-01-02' AS day",
      );
      expect(row).toEqual({
        ms: "2026-01-02T03:04:05.678Z",
        before: "1969-12-31T23:59:59.999999Z",
        day: "2026-01-02",
      });
    });
  });
});
