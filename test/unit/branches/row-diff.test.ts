import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffRows, type Row } from "../../../shared/control/branches/row-diff.ts";

describe("diffRows", () => {
  it("counts whole rows as multisets, and changed rows by key", () => {
    const branch = [
      { id: 1, v: 1 },
      { id: 2, v: 2 },
      { id: 2, v: 2 },
      { id: 4, v: 4 },
    ];
    const live = [
      { id: 1, v: 1 },
      { id: 2, v: 2 },
      { id: 3, v: 3 },
      { id: 4, v: 40 },
    ];
    const whole = diffRows(branch, live, undefined, 5);
    expect(whole.onlyOnBranch).toEqual({
      count: 2,
      samples: [
        { id: 2, v: 2 },
        { id: 4, v: 4 },
      ],
    });
    expect(whole.onlyOnLive).toEqual({
      count: 2,
      samples: [
        { id: 3, v: 3 },
        { id: 4, v: 40 },
      ],
    });
    expect(whole.changed).toBeUndefined();
    const keyed = diffRows(branch, live, ["id"], 1);
    expect(keyed.changed).toEqual({
      count: 1,
      samples: [{ key: { id: 4 }, branch: { id: 4, v: 4 }, live: { id: 4, v: 40 } }],
    });
    expect(keyed.onlyOnLive).toEqual({ count: 1, samples: [{ id: 3, v: 3 }] });
    expect(keyed.onlyOnBranch.count).toBe(1);
  });

  it("applying the diff to live gives the branch's rows (whole-row multisets)", () => {
    const row = fc.record({ id: fc.integer({ min: 0, max: 5 }), v: fc.integer({ min: 0, max: 2 }) });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 12 }), fc.array(row, { maxLength: 12 }), (branch, live) => {
        const diff = diffRows(branch, live, undefined, 1000);
        const sorted = (rows: readonly Row[]) => rows.map((r) => JSON.stringify(r)).sort();
        const rebuilt = [...live];
        for (const gone of diff.onlyOnLive.samples)
          rebuilt.splice(
            rebuilt.findIndex((r) => JSON.stringify(r) === JSON.stringify(gone)),
            1,
          );
        expect(sorted([...rebuilt, ...diff.onlyOnBranch.samples])).toEqual(sorted(branch));
      }),
    );
  });
});
