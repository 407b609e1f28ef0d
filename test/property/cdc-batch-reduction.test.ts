import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cdcBatchReduction, type CdcBatchReduction } from "../../shared/engine/auto-cdc/batch-reduction.ts";
import type { AutoCdcFlowPlan } from "../../shared/pipeline/plan/index.ts";
import { scd1Model, scd2Model, tie, type CdcEvent } from "../support/cdc/cdc-model.ts";
import { cdcEvents } from "../support/cdc/cdc-events.ts";

/**
 * The rule by which a Spark batch drops AUTO CDC events (auto-cdc/batch-reduction.ts, run by
 * functions/spark/ebb_spark_cdc.py `reduce_events`) is sound: for random event streams (keys
 * repeating, sequences out of order and tied, deletes, truncates, NULL values) split into random
 * batches, the target the reference model folds from every event equals the one it folds from each
 * batch's kept events, SCD type 1 with `ignore_null_updates` and without, and SCD type 2 (one event
 * per key and sequence, by the tie rule). The interop tests (test/interop/spark-cdc.test.ts,
 * spark-cdc-tie.test.ts) check that Spark keeps what this rule keeps and hashes as DuckDB does.
 */

const event: fc.Arbitrary<CdcEvent> = cdcEvents({ keys: 3, sequences: 8, truncateSequences: 6, nullFreq: 3 });

/** What the job keeps of one batch (the rule as reduce_events runs it). */
function kept(batch: readonly CdcEvent[], rule: CdcBatchReduction): CdcEvent[] {
  const applicable = (e: CdcEvent) => e.op !== "T" && e.k !== null;
  const bound = new Map<number, number>();
  for (const e of batch)
    if (applicable(e) && (rule.keep === "latest" || e.op === "D"))
      bound.set(e.k!, Math.max(bound.get(e.k!) ?? -Infinity, e.seq));
  const latest = batch.filter(
    (e) => rule.keep === "every-sequence" || !applicable(e) || !bound.has(e.k!) || e.seq >= bound.get(e.k!)!,
  );
  // Ties: one event per key and sequence, a delete first, then the higher hash (every column's type
  // is one the rule hashes here: the model's are integers and strings).
  const rank = (e: CdcEvent) => `${e.op === "D" ? 1 : 0}${tie(e, true)}`;
  const winner = new Map<string, CdcEvent>();
  for (const e of latest.filter(applicable)) {
    const at = `${e.k}/${e.seq}`;
    const held = winner.get(at);
    if (!held || rank(e) > rank(held)) winner.set(at, e);
  }
  return latest.filter((e) => !applicable(e) || winner.get(`${e.k}/${e.seq}`) === e);
}

const plan = (ignoreNullUpdates: boolean): AutoCdcFlowPlan => ({
  kind: "auto_cdc",
  flow: "apply",
  sql: "SELECT * FROM source",
  keys: ["k"],
  sequenceBy: ["seq"],
  scdType: 1,
  ignoreNullUpdates,
});

describe("the SCD type 1 batch reduction", () => {
  it("keeps every event that can decide the target, whatever the batches", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(event, { maxLength: 10 }), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (batches, ignoreNullUpdates) => {
          const rule = cdcBatchReduction(plan(ignoreNullUpdates));
          const options = { ignoreNullUpdates, tracked: [] };
          expect(
            scd1Model(
              batches.flatMap((b) => kept(b, rule)),
              options,
            ),
          ).toEqual(scd1Model(batches.flat(), options));
        },
      ),
      { numRuns: Number(process.env["RUNS"] ?? 2000) },
    );
  });

  it("keeps one event per key and sequence of an SCD type 2 flow (each sequence may be a version)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(event, { maxLength: 10 }), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.constantFrom<("a" | "b")[]>([], ["a"], ["b"], ["a", "b"]),
        (batches, ignoreNullUpdates, tracked) => {
          const rule = cdcBatchReduction({ ...plan(ignoreNullUpdates), scdType: 2 });
          expect(rule.keep).toBe("every-sequence");
          const options = { ignoreNullUpdates, tracked };
          expect(
            scd2Model(
              batches.flatMap((b) => kept(b, rule)),
              options,
            ),
          ).toEqual(scd2Model(batches.flat(), options));
        },
      ),
      { numRuns: Number(process.env["RUNS"] ?? 1000) },
    );
  });
});
