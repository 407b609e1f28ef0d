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

const sorted = (rows: readonly Record<string, unknown>[]) =>
  rows
    .map((row) =>
      JSON.stringify(row, (_, value: unknown) => (typeof value === "bigint" ? `${value}n` : value)),
    )
    .sort();

describe("DeltaTable.changes", () => {
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
