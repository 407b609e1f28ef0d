import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { openChangeFeed } from "../../../shared/delta/read/change-data-feed.ts";
import type { StructField, StructType } from "../../../shared/delta/table/schema.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { steppingClock } from "./delta-test-kit.ts";

/**
 * `DeltaTable.changes` reads the feed's files in the table's columns at once, and asks DuckDB which
 * columns they have only when that fails to bind: whatever the commits, its rows are those of the
 * feed read the plain way (the `table_changes` view, which always asks first).
 */

let duck: DuckSession;
beforeAll(async () => {
  duck = await DuckSession.open();
});
afterAll(() => duck?.close());

type Step =
  | { readonly kind: "append"; readonly rows: number }
  | { readonly kind: "delete"; readonly remainder: number }
  | { readonly kind: "widen"; readonly rows: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("append" as const), rows: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant("delete" as const), remainder: fc.integer({ min: 0, max: 2 }) }),
  // An overwrite that adds a column; with no rows, the feed of its version reads only files without it.
  fc.record({ kind: fc.constant("widen" as const), rows: fc.integer({ min: 0, max: 2 }) }),
);

const field = (name: string, type: "long" | "string"): StructField => ({
  name,
  type,
  nullable: true,
  metadata: {},
});

async function tableAfter(steps: readonly Step[]): Promise<{ store: MemoryObjectStore; latest: number }> {
  const store = new MemoryObjectStore(Date.now);
  let schema: StructType = { type: "struct", fields: [field("id", "long"), field("v", "string")] };
  const table = await DeltaTable.create(
    store,
    { schema, properties: { "delta.enableChangeDataFeed": "true" } },
    { duck, clock: steppingClock() },
  );
  let next = 0;
  const rows = (count: number) =>
    Array.from({ length: count }, () => {
      next += 1;
      return Object.fromEntries(
        schema.fields.map((f) => [f.name, f.name === "id" ? next : `${f.name}${next}`]),
      );
    });
  try {
    for (const s of steps) {
      if (s.kind === "append") await table.append({ rows: rows(s.rows) });
      else if (s.kind === "delete") await table.delete(`id % 3 = ${s.remainder}`);
      else {
        schema = { ...schema, fields: [...schema.fields, field(`c${schema.fields.length}`, "string")] };
        await table.overwrite({ rows: rows(s.rows) }, { overwriteSchema: schema });
      }
    }
    return { store, latest: table.snapshot.version };
  } finally {
    await table.close();
  }
}

/** Rows as sorted texts: DuckDB's SELECT gives no order; bigints, NaN and -0 kept apart. */
const sorted = (rows: readonly Record<string, unknown>[]) =>
  rows
    .map((row) =>
      JSON.stringify(row, (_, value: unknown) => {
        if (typeof value === "bigint") return `${value}n`;
        if (
          typeof value === "number" &&
          (Number.isNaN(value) || Object.is(value, -0) || !Number.isFinite(value))
        )
          return `${value === 0 ? "-0" : value}`;
        return value;
      }),
    )
    .sort();

/** A row of every type the in-process reader reads (change-rows-in-process.ts), nulls among them. */
const typedRow = fc.record({
  l: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: null }),
  i: fc.option(fc.integer(), { nil: null }),
  s: fc.option(fc.integer({ min: -32768, max: 32767 }), { nil: null }),
  b: fc.option(fc.integer({ min: -128, max: 127 }), { nil: null }),
  t: fc.option(fc.string({ maxLength: 12 }), { nil: null }),
  f: fc.option(fc.boolean(), { nil: null }),
  d: fc.option(fc.oneof(fc.double(), fc.constantFrom(Number.NaN, -0, Number.POSITIVE_INFINITY)), {
    nil: null,
  }),
  r: fc.option(fc.float(), { nil: null }),
});
const typedSchema: StructType = {
  type: "struct",
  fields: (
    [
      ["k", "long"],
      ["l", "long"],
      ["i", "integer"],
      ["s", "short"],
      ["b", "byte"],
      ["t", "string"],
      ["f", "boolean"],
      ["d", "double"],
      ["r", "float"],
    ] as const
  ).map(([name, type]) => ({ name, type, nullable: name !== "k", metadata: {} })),
};

type TypedStep =
  | {
      readonly kind: "append";
      readonly rows: readonly (typeof typedRow extends fc.Arbitrary<infer R> ? R : never)[];
    }
  | { readonly kind: "delete"; readonly remainder: number };

const typedStep: fc.Arbitrary<TypedStep> = fc.oneof(
  fc.record({
    kind: fc.constant("append" as const),
    rows: fc.array(typedRow, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant("delete" as const), remainder: fc.integer({ min: 0, max: 2 }) }),
);

describe("DeltaTable.changes", () => {
  it("reads tiny files of every in-process type as DuckDB reads them", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(typedStep, { minLength: 1, maxLength: 5 }),
        fc.nat(),
        fc.nat(),
        async (steps, a, b) => {
          const store = new MemoryObjectStore(Date.now);
          const table = await DeltaTable.create(
            store,
            { schema: typedSchema, properties: { "delta.enableChangeDataFeed": "true" } },
            { duck, clock: steppingClock() },
          );
          try {
            let next = 0;
            for (const s of steps) {
              if (s.kind === "append")
                await table.append({ rows: s.rows.map((row) => ({ k: ++next, ...row })) });
              else await table.delete(`k % 3 = ${s.remainder}`);
            }
            const latest = table.snapshot.version;
            const from = 1 + (a % latest);
            const to = from + (b % (latest - from + 1));
            const view = await openChangeFeed(store, from, to, { duck });
            const reference = sorted(await view.answerRows());
            await view.close();
            expect(sorted(await table.changes(from, to))).toEqual(reference);
          } finally {
            await table.close();
          }
        },
      ),
      { numRuns: 15 },
    );
  });

  it("gives the rows of the feed read the plain way, across added columns too", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.nat(),
        async (steps, a, b) => {
          const { store, latest } = await tableAfter(steps);
          const from = 1 + (a % latest);
          const to = from + (b % (latest - from + 1));
          const reference = await openChangeFeed(store, from, to, { duck }).then(
            async (view) => {
              try {
                return { rows: sorted(await view.answerRows()) };
              } finally {
                await view.close();
              }
            },
            (error: unknown) => ({ error: (error as Error).constructor.name }),
          );
          const table = await DeltaTable.open(store, { duck });
          try {
            const read = await table.changes(from, to).then(
              (rows) => ({ rows: sorted(rows) }),
              (error: unknown) => ({ error: (error as Error).constructor.name }),
            );
            expect(read).toEqual(reference);
          } finally {
            await table.close();
          }
        },
      ),
      {
        numRuns: 12,
        // The feed of an overwrite that added a column and wrote no rows: no file it reads has the column.
        examples: [
          [
            [
              { kind: "append", rows: 2 },
              { kind: "widen", rows: 0 },
            ],
            1,
            0,
          ],
        ],
      },
    );
  });
});
