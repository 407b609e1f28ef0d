import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitTimestampSql } from "../../shared/delta/index.ts";
import { DuckSession } from "../../shared/duck/duck-session.ts";

/**
 * The change feed's `_commit_timestamp` constant (`commitTimestampSql`, an ISO literal) against the
 * expression it replaced (`epoch_ms`, cast to TIMESTAMPTZ): the same instant, as DuckDB computes it
 * and as a user is answered it, for any time a JavaScript Date holds (years before 1 and after 9999
 * included, where the ISO text cannot be used).
 */
describe("change feed commit timestamps", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  const millis = fc.oneof(
    fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }),
    fc.integer({ min: -62_200_000_000_000, max: 253_500_000_000_000 }), // around years 1 and 9999
    fc.integer({ min: 0, max: 4_102_444_800_000 }), // 1970-2100: commits' own times
  );

  it("equals CAST(epoch_ms(…) AS TIMESTAMPTZ)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(millis, { minLength: 1, maxLength: 50 }), async (values) => {
        const rows = values.map(
          (ms, i) =>
            `(${i}, CAST(${commitTimestampSql(ms)} AS TIMESTAMPTZ), CAST(epoch_ms(${ms}::BIGINT) AS TIMESTAMPTZ))`,
        );
        const answered = await duck.answerRows(
          `SELECT i, got, want, got = want AS same FROM (VALUES ${rows.join(", ")}) t(i, got, want) ORDER BY i`,
        );
        for (const row of answered) {
          expect(row["same"]).toBe(true);
          expect(row["got"]).toEqual(row["want"]);
        }
      }),
      { numRuns: 100 },
    );
  });
});
