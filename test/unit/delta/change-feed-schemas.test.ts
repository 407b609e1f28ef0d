import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  planChangeFeedRange,
  readProblems,
  type SchemaAt,
} from "../../../shared/delta/read/change-feed-schemas.ts";
import type { DeltaType, StructField, StructType } from "../../../shared/delta/index.ts";

const field = (name: string, type: DeltaType, nullable = true): StructField => ({
  name,
  type,
  nullable,
  metadata: {},
});
const struct = (...fields: StructField[]): StructType => ({ type: "struct", fields });

const base = struct(field("id", "long", false), field("name", "string"));
const added = struct(...base.fields, field("extra", "string"));

describe("which schemas read as another (Delta's batch change feed rule)", () => {
  it("reads a schema as itself and as one that adds columns", () => {
    expect(readProblems(base, base)).toEqual([]);
    expect(readProblems(base, added)).toEqual([]);
    expect(readProblems(struct(), base)).toEqual([]);
  });

  it("names a dropped column, a type change, a rename by case and a new NOT NULL", () => {
    expect(readProblems(added, base)).toEqual(["column extra is dropped"]);
    expect(readProblems(base, struct(field("id", "integer", false), field("name", "string")))).toEqual([
      "column id changes type from long to integer",
    ]);
    expect(readProblems(base, struct(field("ID", "long", false), field("name", "string")))).toEqual([
      "column id is renamed to ID",
    ]);
    expect(readProblems(base, struct(field("id", "long", false), field("name", "string", false)))).toEqual([
      "column name becomes NOT NULL",
    ]);
    // NOT NULL that becomes nullable reads fine: the rows have no NULLs.
    expect(readProblems(base, struct(field("id", "long"), field("name", "string")))).toEqual([]);
    const decimal = (precision: number, scale: number): DeltaType => ({ type: "decimal", precision, scale });
    expect(readProblems(struct(field("d", decimal(10, 2))), struct(field("d", decimal(12, 2))))).toEqual([
      "column d changes type from decimal(10,2) to decimal(12,2)",
    ]);
  });

  it("applies the rule inside structs, arrays and maps", () => {
    const nested = (inner: StructType, containsNull = true, valueContainsNull = true) =>
      struct(
        field("s", inner),
        field("a", { type: "array", elementType: inner, containsNull }),
        field("m", { type: "map", keyType: "string", valueType: "long", valueContainsNull }),
      );
    expect(readProblems(nested(base), nested(added))).toEqual([]);
    expect(readProblems(nested(added), nested(base))).toEqual([
      "column s.extra is dropped",
      "column a[].extra is dropped",
    ]);
    expect(readProblems(nested(base), nested(base, false, false))).toEqual([
      "the elements of a become NOT NULL",
      "the values of m become NOT NULL",
    ]);
    expect(readProblems(struct(field("s", base)), struct(field("s", "string")))).toEqual([
      "column s changes type from struct to string",
    ]);
  });
});

describe("a change feed range across schema changes", () => {
  it("reads a range with additive changes only, in its end version's schema", () => {
    expect(
      planChangeFeedRange(1, 5, [
        { version: 1, schema: base },
        { version: 3, schema: added },
      ]),
    ).toEqual({ readable: true });
  });

  it("splits a range across a RESTORE to before a column was added at the RESTORE", () => {
    // 1: extra added, 2: more added, 4: RESTORE to the base schema (the interop suite's shape).
    const more = struct(...added.fields, field("more", "integer"));
    const schemas: SchemaAt[] = [
      { version: 1, schema: added },
      { version: 2, schema: more },
      { version: 4, schema: base },
    ];
    expect(planChangeFeedRange(1, 5, schemas)).toEqual({
      readable: false,
      ranges: [
        [1, 3],
        [4, 5],
      ],
      breaks: [
        { version: 4, problems: ["column extra is dropped", "column more is dropped"], readVersion: 5 },
      ],
    });
    expect(planChangeFeedRange(1, 3, schemas.slice(0, 2))).toEqual({ readable: true });
    expect(planChangeFeedRange(3, 5, [{ version: 3, schema: more }, schemas[2]!])).toMatchObject({
      ranges: [
        [3, 3],
        [4, 5],
      ],
    });
  });

  it("names every break of a range with several", () => {
    const typed = struct(field("id", "string", false), field("name", "string"));
    const plan = planChangeFeedRange(0, 9, [
      { version: 0, schema: added },
      { version: 3, schema: base },
      { version: 6, schema: typed },
    ]);
    expect(plan).toEqual({
      readable: false,
      ranges: [
        [0, 2],
        [3, 5],
        [6, 9],
      ],
      breaks: [
        { version: 3, problems: ["column extra is dropped"], readVersion: 5 },
        { version: 6, problems: ["column id changes type from long to string"], readVersion: 9 },
      ],
    });
  });

  /** Delta's rule stated directly: every schema the range's rows were written in reads as the end's. */
  function readableByDefinition(schemas: readonly SchemaAt[], from: number, to: number): boolean {
    const at = (v: number) => schemas.filter((s) => s.version <= v).at(-1)!.schema;
    const written = [
      at(from),
      ...schemas.filter((s) => s.version > from && s.version <= to).map((s) => s.schema),
    ];
    return written.every((schema) => readProblems(schema, at(to)).length === 0);
  }

  const COLUMNS = ["a", "b", "c"];
  const schemaArb = fc
    .subarray(COLUMNS)
    .chain((names) =>
      fc.tuple(
        ...names.map((name) =>
          fc
            .record({ type: fc.constantFrom<DeltaType>("long", "string"), nullable: fc.boolean() })
            .map((f) => field(name, f.type, f.nullable)),
        ),
      ),
    )
    .map((fields) => struct(...fields));
  /** A range and its schemas: one at `from`, then changes at distinct later versions up to `to`. */
  const rangeArb = fc
    .record({
      from: fc.nat(3),
      length: fc.nat(8),
      first: schemaArb,
      changes: fc.array(fc.record({ at: fc.nat(8), schema: schemaArb }), { maxLength: 5 }),
    })
    .map(({ from, length, first, changes }) => {
      const to = from + length;
      const later = new Map<number, StructType>();
      for (const change of changes)
        if (change.at >= 1 && change.at <= length) later.set(from + change.at, change.schema);
      const schemas: SchemaAt[] = [
        { version: from, schema: first },
        ...[...later].sort(([x], [y]) => x - y).map(([version, schema]) => ({ version, schema })),
      ];
      return { from, to, schemas };
    });

  it("refuses exactly the ranges the rule refuses, and splits them into the fewest readable pieces from the end", () => {
    fc.assert(
      fc.property(rangeArb, ({ from, to, schemas }) => {
        const plan = planChangeFeedRange(from, to, schemas);
        expect(plan.readable).toBe(readableByDefinition(schemas, from, to));
        if (plan.readable) return;
        // Contiguous pieces covering the range, each readable, each starting as early as the rule allows.
        expect(plan.ranges[0]![0]).toBe(from);
        expect(plan.ranges.at(-1)![1]).toBe(to);
        for (const [i, [start, end]] of plan.ranges.entries()) {
          expect(start).toBeLessThanOrEqual(end);
          if (i > 0) expect(start).toBe(plan.ranges[i - 1]![1] + 1);
          expect(readableByDefinition(schemas, start, end)).toBe(true);
          if (start > from) expect(readableByDefinition(schemas, start - 1, end)).toBe(false);
        }
        expect(plan.breaks.map((b) => b.version)).toEqual(plan.ranges.slice(1).map(([start]) => start));
        for (const b of plan.breaks) {
          expect(schemas.some((s) => s.version === b.version)).toBe(true);
          expect(b.problems.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });
});
