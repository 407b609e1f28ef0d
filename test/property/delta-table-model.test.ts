import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DeltaTable,
  LAST_CHECKPOINT_KEY,
  loadSnapshot,
  type Snapshot,
  type StructType,
} from "../../shared/delta/index.ts";
import { DuckSession, type DuckRow } from "../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../shared/object-store/memory-object-store.ts";
import type { ObjectStore } from "../../shared/object-store/object-store.ts";

/**
 * Random sequences of create / append / overwrite / delete / update / merge / restore / vacuum /
 * checkpoint against an in-memory model (the rows of every version). After every step: the latest
 * snapshot's rows equal the model; the snapshot loaded through checkpoints equals a replay of the
 * JSON log alone; and time travel to every version gives the model's rows of that version.
 */

interface Row {
  readonly id: number;
  readonly grp: string | null;
  readonly v: number | null;
}

type Command =
  | { readonly kind: "append" | "overwrite"; readonly rows: readonly Row[] }
  | { readonly kind: "delete"; readonly below: number }
  | { readonly kind: "update"; readonly modulo: number; readonly add: number }
  | { readonly kind: "merge"; readonly rows: readonly Row[]; readonly mode: "upsert" | "delete" | "insert" }
  | { readonly kind: "restore"; readonly pick: number }
  | { readonly kind: "vacuum" }
  | { readonly kind: "checkpoint" };

const schema: StructType = {
  type: "struct",
  fields: [
    { name: "id", type: "long", nullable: false, metadata: {} },
    { name: "grp", type: "string", nullable: true, metadata: {} },
    { name: "v", type: "long", nullable: true, metadata: {} },
  ],
};

const rowArb = fc.record({
  id: fc.integer({ min: 0, max: 12 }),
  grp: fc.constantFrom("a", "b%c", null),
  v: fc.option(fc.integer({ min: -20, max: 20 }), { nil: null }),
});
const rowsArb = fc.array(rowArb, { maxLength: 4 });
const uniqueRowsArb = fc.uniqueArray(rowArb, { maxLength: 4, selector: (row) => row.id });
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant("append" as const), rows: rowsArb }),
  fc.record({ kind: fc.constant("overwrite" as const), rows: rowsArb }),
  fc.record({ kind: fc.constant("delete" as const), below: fc.integer({ min: -20, max: 20 }) }),
  fc.record({
    kind: fc.constant("update" as const),
    modulo: fc.integer({ min: 0, max: 2 }),
    add: fc.integer({ min: -5, max: 5 }),
  }),
  fc.record({
    kind: fc.constant("merge" as const),
    rows: uniqueRowsArb,
    mode: fc.constantFrom("upsert" as const, "delete" as const, "insert" as const),
  }),
  fc.record({ kind: fc.constant("restore" as const), pick: fc.nat() }),
  fc.constant({ kind: "vacuum" as const }),
  fc.constant({ kind: "checkpoint" as const }),
);

/** The model: what each command does to the rows of the latest version. */
function applyToModel(
  rows: readonly Row[],
  command: Command,
  versions: readonly (readonly Row[])[],
): readonly Row[] | undefined {
  switch (command.kind) {
    case "append":
      return [...rows, ...command.rows];
    case "overwrite":
      return command.rows;
    case "delete":
      return rows.filter((r) => !(r.v !== null && r.v < command.below));
    case "update":
      return rows.map((r) =>
        r.id % 3 === command.modulo ? { ...r, v: r.v === null ? null : r.v + command.add } : r,
      );
    case "merge": {
      const source = new Map(command.rows.map((r) => [r.id, r]));
      const targetIds = new Set(rows.map((r) => r.id));
      if (command.mode === "delete") return rows.filter((r) => !source.has(r.id));
      const kept = command.mode === "upsert" ? rows.map((r) => source.get(r.id) ?? r) : rows;
      return [...kept, ...command.rows.filter((r) => !targetIds.has(r.id))];
    }
    case "restore":
      return versions[command.pick % versions.length];
    case "vacuum":
    case "checkpoint":
      return undefined; // no new version
  }
}

async function run(
  table: DeltaTable,
  command: Command,
  versions: readonly (readonly Row[])[],
): Promise<void> {
  switch (command.kind) {
    case "append":
      await table.append({ rows: command.rows });
      return;
    case "overwrite":
      await table.overwrite({ rows: command.rows });
      return;
    case "delete":
      await table.delete(`v < ${command.below}`);
      return;
    case "update":
      await table.update({ set: { v: `v + ${command.add}` }, where: `id % 3 = ${command.modulo}` });
      return;
    case "merge":
      await table.merge({
        source: { rows: command.rows },
        on: ["id"],
        ...(command.mode === "upsert"
          ? { whenMatched: { update: "all" as const }, whenNotMatched: "insert" as const }
          : {}),
        ...(command.mode === "delete" ? { whenMatched: "delete" as const } : {}),
        ...(command.mode === "insert" ? { whenNotMatched: "insert" as const } : {}),
      });
      return;
    case "restore":
      await table.restore({ to: { version: command.pick % versions.length } });
      return;
    case "vacuum": {
      // Every version stays protected, so time travel keeps working: only change data files (which
      // belong to commits, not to any version's state) may go.
      const plan = await table.vacuum({
        retentionHours: 0,
        allowShortRetention: true,
        protectedVersions: versions.map((_, version) => version),
      });
      expect(plan.filesToDelete.filter((f) => !f.key.startsWith("_change_data/"))).toEqual([]);
      return;
    }
    case "checkpoint":
      await table.checkpoint();
      return;
  }
}

const sorted = (rows: readonly Row[]) =>
  rows
    .map((r) => [r.id, r.grp, r.v] as const)
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
const fromDuck = (rows: readonly DuckRow[]) =>
  sorted(
    rows.map((r) => ({
      id: Number(r.id),
      grp: r.grp as string | null,
      v: r.v === null ? null : Number(r.v),
    })),
  );

/** The store without checkpoints: loading from it replays the JSON commits only. */
function withoutCheckpoints(store: ObjectStore): ObjectStore {
  const hidden = (key: string) => key.includes(".checkpoint.") || key === LAST_CHECKPOINT_KEY;
  return {
    ...store,
    get: (key) => (hidden(key) ? store.get(`${key}.hidden`) : store.get(key)),
    head: async (key) => (hidden(key) ? undefined : store.head(key)),
    list: async (prefix, options) => {
      const page = await store.list(prefix, options);
      return { ...page, objects: page.objects.filter((o) => !hidden(o.key)) };
    },
  };
}

function comparable(snapshot: Snapshot) {
  return {
    version: snapshot.version,
    metadata: snapshot.metadata,
    protocol: snapshot.protocol,
    files: [...snapshot.files.keys()].sort(),
    txns: [...snapshot.txns.values()].map((t) => [t.appId, t.version]).sort(),
  };
}

describe("DeltaTable against a model of rows per version", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("agrees with the model after every step, through checkpoints and time travel", async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        fc.boolean(),
        fc.integer({ min: 2, max: 4 }),
        fc.array(commandArb, { minLength: 1, maxLength: 7 }),
        async (initial, partitioned, checkpointInterval, commands) => {
          let now = Date.parse("2026-01-01T00:00:00Z");
          const clock = () => (now += 1000);
          const store = new MemoryObjectStore(clock);
          const table = await DeltaTable.create(
            store,
            {
              schema,
              ...(partitioned ? { partitionColumns: ["grp"] } : {}),
              properties: {
                "delta.checkpointInterval": String(checkpointInterval),
                "delta.enableChangeDataFeed": "true",
              },
              rows: { rows: initial },
            },
            { clock, duck },
          );
          try {
            const versions: (readonly Row[])[] = [initial];
            for (const command of commands) {
              await run(table, command, versions);
              const next = applyToModel(versions[versions.length - 1]!, command, versions);
              if (next) versions.push(next);
              expect(table.snapshot.version).toBe(versions.length - 1);
              expect(fromDuck(await table.scan())).toEqual(sorted(versions[versions.length - 1]!));
              const latest = await loadSnapshot(store);
              expect(comparable(latest)).toEqual(comparable(await loadSnapshot(withoutCheckpoints(store))));
              expect(comparable(latest)).toEqual(comparable(table.snapshot));
              for (let version = 0; version < versions.length - 1; version++) {
                expect(fromDuck(await table.scan({ version }))).toEqual(sorted(versions[version]!));
              }
            }
          } finally {
            await table.close();
          }
        },
      ),
      { numRuns: Number(process.env["DELTA_MODEL_RUNS"] ?? 25) },
    );
  });
});
