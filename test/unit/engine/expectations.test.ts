import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryError } from "../../../shared/engine/errors.ts";
import { applyViewExpectations } from "../../../shared/engine/expectations.ts";
import { Sandbox } from "../../../shared/engine/sandbox.ts";

/** A materialized view's refreshed rows (a SELECT in the sandbox) through its expectations. */
describe("a materialized view's expectations", () => {
  let sandbox: Sandbox;
  let output: { sql: string; rows: number };
  beforeAll(async () => {
    sandbox = await Sandbox.open();
    await sandbox.runUserQuery(
      "SELECT * FROM (VALUES ('a', 1), ('b', -2), ('c', NULL)) v(k, total)",
      "__ebb_view_output",
      'materialized view "totals"',
    );
    output = { sql: "SELECT * FROM __ebb_view_output", rows: 3 };
  });
  afterAll(() => sandbox?.close());

  it("leaves the refreshed rows as they are when the view has none", async () => {
    expect(
      await applyViewExpectations(
        sandbox,
        { dataset: "totals", flow: "totals", expectations: undefined },
        output,
      ),
    ).toBe(output);
  });

  it("writes the rows passing every drop expectation to a new file, with the counts", async () => {
    const checked = await applyViewExpectations(
      sandbox,
      {
        dataset: "totals",
        flow: "totals",
        expectations: [{ name: "positive", condition: "total > 0", on_violation: "drop" }],
      },
      output,
    );
    expect(checked.rows).toBe(1);
    expect(checked.quality).toEqual({
      dropped_records: 2,
      expectations: [{ name: "positive", dataset: "totals", passed_records: 1, failed_records: 2 }],
    });
    expect(await sandbox.rows(checked.sql)).toEqual([{ k: "a", total: 1 }]);
  });

  it("fails as the user's SQL, naming the view, when a condition fails as it runs", async () => {
    const error = await applyViewExpectations(
      sandbox,
      {
        dataset: "totals",
        flow: "totals",
        expectations: [{ name: "numeric", condition: "CAST(k AS INTEGER) > 0", on_violation: "warn" }],
      },
      output,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryError);
    expect((error as Error).message).toMatch(
      /^the SQL of the expectations of materialized view "totals" failed: Conversion Error/,
    );
  });
});
