import fc from "fast-check";
import type { CdcEvent } from "./cdc-model.ts";

/**
 * Random change events for the AUTO CDC reference model (cdc-model.ts): mostly upserts with NULL or
 * repeated values, deletes, and truncates (no key), keys and sequences from small ranges so they
 * repeat and tie.
 */
export function cdcEvents(ranges: {
  readonly keys: number;
  readonly sequences: number;
  readonly truncateSequences: number;
  /** One value in `nullFreq` is NULL. */
  readonly nullFreq: number;
}): fc.Arbitrary<CdcEvent> {
  const key = fc.integer({ min: 1, max: ranges.keys });
  const seq = fc.integer({ min: 1, max: ranges.sequences });
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        k: key,
        seq,
        op: fc.constant("U" as const),
        a: fc.option(fc.integer({ min: 0, max: 2 }), { freq: ranges.nullFreq }),
        b: fc.option(fc.constantFrom("x", "y"), { freq: ranges.nullFreq }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        k: key,
        seq,
        op: fc.constant("D" as const),
        a: fc.constant(null),
        b: fc.constant(null),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant(null),
        seq: fc.integer({ min: 1, max: ranges.truncateSequences }),
        op: fc.constant("T" as const),
        a: fc.constant(null),
        b: fc.constant(null),
      }),
    },
  );
}
