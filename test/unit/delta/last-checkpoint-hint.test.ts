import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { lastCheckpointHint } from "../../../shared/delta/log/log-listing.ts";

/** The schema the hand check replaced (PROTOCOL.md "Last Checkpoint File Schema"): its oracle. */
const Schema = z.object({
  version: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  size: z.number().optional(),
  parts: z.number().optional(),
});

const oracle = (json: unknown) => {
  const parsed = Schema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
};

const field = fc.oneof(
  fc.constant(undefined),
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(0.5, -0, 2 ** 53 - 1, 2 ** 53, 1e300, Infinity, -Infinity, Number.NaN),
  fc.double(),
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([1]),
);

describe("_last_checkpoint hint", () => {
  it("accepts and drops exactly what the zod schema did", () => {
    fc.assert(
      fc.property(
        fc.record({ version: field, size: field, parts: field, sizeInBytes: field }, { requiredKeys: [] }),
        (record) => {
          expect(lastCheckpointHint(record)).toEqual(oracle(record));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("refuses what is not an object, and reads a hint of JSON text as written", () => {
    for (const json of [null, 3, "x", [], [{ version: 1 }], true])
      expect(lastCheckpointHint(json)).toEqual(oracle(json));
    const text = '{"version":1000,"size":1002,"parts":null,"sizeInBytes":45000,"numOfAddFiles":1000}';
    expect(lastCheckpointHint(JSON.parse(text))).toBeUndefined();
    expect(lastCheckpointHint(JSON.parse('{"version":1000,"size":1002,"numOfAddFiles":1000}'))).toEqual({
      version: 1000,
      size: 1002,
    });
    expect(lastCheckpointHint(JSON.parse('{"version":1e999}'))).toBeUndefined();
  });
});
