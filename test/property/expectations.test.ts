import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExpectationDefinition, OnViolation } from "../../shared/pipeline/definition-schema.ts";
import { ExpectationViolationError } from "../../shared/engine/errors.ts";
import { applyExpectations } from "../../shared/engine/expectations.ts";
import { Sandbox } from "../../shared/engine/sandbox.ts";

/**
 * Expectations over random rows, in the real sandbox: for every expectation passed + failed = rows in,
 * and passed = the rows whose condition is TRUE (a NULL result fails, as Spark's filter has it); the
 * rows written are exactly those passing every `drop` expectation (the others are absent, and counted
 * as dropped); a `fail` expectation with a failing row stops the batch, naming a row that fails it.
 *
 * RUNS sets the number of runs (default 60).
 */

interface Row {
  readonly a: number | null;
  readonly b: number | null;
}

/** Conditions and their model: true, false or null (SQL's three values). */
const CONDITIONS: readonly { readonly sql: string; readonly model: (row: Row) => boolean | null }[] = [
  { sql: "a > b", model: (r) => (r.a === null || r.b === null ? null : r.a > r.b) },
  { sql: "a IS NOT NULL", model: (r) => r.a !== null },
  { sql: "a % 3 = 0", model: (r) => (r.a === null ? null : r.a % 3 === 0) },
  {
    // SQL's OR: true if either side is true, null if neither is and one is null.
    sql: "coalesce(a, 0) < 5 OR b > 2",
    model: (r) => ((r.a ?? 0) < 5 ? true : r.b === null ? null : r.b > 2),
  },
];

const rowArb = fc.record({
  a: fc.option(fc.integer({ min: -10, max: 10 }), { nil: null }),
  b: fc.option(fc.integer({ min: -10, max: 10 }), { nil: null }),
});

const expectationsArb = (actions: readonly OnViolation[]) =>
  fc.uniqueArray(
    fc.record({
      condition: fc.integer({ min: 0, max: CONDITIONS.length - 1 }),
      action: fc.constantFrom(...actions),
    }),
    { minLength: 1, maxLength: 3, selector: (e) => e.condition },
  );

const sortRows = (rows: readonly Row[]) =>
  [...rows].sort((x, y) => (x.a ?? -99) - (y.a ?? -99) || (x.b ?? -99) - (y.b ?? -99));

describe("expectations over random rows", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.open();
  });
  afterAll(() => sandbox?.close());

  async function check(rows: readonly Row[], chosen: { condition: number; action: OnViolation }[]) {
    await sandbox.run("CREATE OR REPLACE TEMP TABLE batch (a BIGINT, b BIGINT)");
    for (const row of rows)
      await sandbox.run(`INSERT INTO batch VALUES (${row.a ?? "NULL"}, ${row.b ?? "NULL"})`);
    const expectations: ExpectationDefinition[] = chosen.map((e, i) => ({
      name: `e${i}`,
      condition: CONDITIONS[e.condition]!.sql,
      on_violation: e.action,
    }));
    const verdicts = chosen.map((e) => rows.map((row) => CONDITIONS[e.condition]!.model(row) === true));
    const failing = chosen.findIndex((e, i) => e.action === "fail" && verdicts[i]!.some((passed) => !passed));
    const attempt = applyExpectations(
      sandbox,
      { dataset: "d", flow: "f", expectations },
      "SELECT * FROM batch",
    );
    if (failing >= 0) {
      const error = await attempt.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ExpectationViolationError);
      const violation = error as ExpectationViolationError;
      const named = chosen[Number(violation.expectation.slice(1))]!;
      expect(named.action).toBe("fail");
      expect(CONDITIONS[named.condition]!.model(JSON.parse(violation.sampleRow) as Row)).not.toBe(true);
      return;
    }
    const checked = await attempt;
    const kept = rows.filter((_, r) => chosen.every((e, i) => e.action !== "drop" || verdicts[i]![r]));
    expect(checked.quality).toEqual({
      dropped_records: rows.length - kept.length,
      expectations: chosen.map((_, i) => {
        const passed = verdicts[i]!.filter(Boolean).length;
        return { name: `e${i}`, dataset: "d", passed_records: passed, failed_records: rows.length - passed };
      }),
    });
    const written = (await sandbox.rows(checked.rowsSql)).map((r) => ({
      a: r["a"] === null ? null : Number(r["a"]),
      b: r["b"] === null ? null : Number(r["b"]),
    }));
    expect(sortRows(written)).toEqual(sortRows(kept));
    expect(checked.rows).toBe(kept.length);
  }

  const runs = Number(process.env["RUNS"] ?? 60);

  it("counts every row once per expectation and writes exactly the rows passing every drop", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { maxLength: 12 }), expectationsArb(["warn", "drop"]), check),
      { numRuns: runs },
    );
  });

  it("fails on a failing row of a fail expectation, and only then", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { maxLength: 8 }), expectationsArb(["warn", "drop", "fail"]), check),
      { numRuns: runs },
    );
  });
});
