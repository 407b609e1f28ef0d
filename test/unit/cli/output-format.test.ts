import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatTable } from "../../../shared/cli/output-format.ts";

describe("formatTable on a terminal", () => {
  it("fits every line in the width, cutting the widest cells with … and never a kept column", () => {
    const cell = fc.string({ maxLength: 300 }).map((s) => s.replace(/\s/g, "x"));
    const rows = fc.array(fc.record({ id: fc.uuid(), name: cell, details: cell }), {
      minLength: 1,
      maxLength: 8,
    });
    fc.assert(
      fc.property(rows, fc.integer({ min: 60, max: 200 }), (drawn, width) => {
        const lines = formatTable(drawn, { width, keep: ["id"] })
          .trimEnd()
          .split("\n");
        expect(lines.every((line) => line.length <= width)).toBe(true);
        drawn.forEach((row, i) => expect(lines[i + 2]!.split(" ")[0]).toBe(row.id));
      }),
    );
  });

  it("cuts only what does not fit, and nothing without a width", () => {
    const rows = [
      { version: 3, operation: "WRITE", metrics: JSON.stringify({ numFiles: 1, numOutputRows: 12345 }) },
    ];
    expect(formatTable(rows, { width: 40 })).toBe(
      [
        "version  operation  metrics",
        "-------  ---------  --------------------",
        '3        WRITE      {"numFiles":1,"numO…',
      ].join("\n") + "\n",
    );
    expect(formatTable(rows)).toContain('{"numFiles":1,"numOutputRows":12345}');
  });
});
