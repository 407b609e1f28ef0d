import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox } from "../../../shared/engine/sandbox.ts";
import {
  IncompatibleStateError,
  manifestFiles,
  openStateVersion,
  planStateVacuum,
  SNAPSHOT_EVERY,
  StateVersionMissingError,
  vacuumFlowState,
  type StateSchema,
  type StateVersion,
} from "../../../shared/state/index.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { listAllKeys, type ObjectStore } from "../../../shared/object-store/object-store.ts";

const flow = { pipelineId: "p1", flowId: "dedup" };
const schema: StateSchema = {
  key: [{ name: "id", type: "BIGINT" }],
  value: [
    { name: "seen", type: "TIMESTAMP" },
    { name: "n", type: "BIGINT" },
  ],
};

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await Sandbox.open();
});
afterAll(async () => {
  await sandbox.close();
});

/** A store that counts reads by key and can fail the nth put (a crash mid-write). */
class RecordingStore {
  readonly gets: string[] = [];
  failPutAt: number | undefined;
  puts = 0;
  constructor(readonly inner: ObjectStore) {}
  view(): ObjectStore {
    return new Proxy(this.inner, {
      get: (target, name, receiver) => {
        if (name === "get")
          return (key: string) => {
            this.gets.push(key);
            return target.get(key);
          };
        if (name === "put")
          return (key: string, body: Uint8Array) => {
            this.puts += 1;
            if (this.failPutAt !== undefined && this.puts >= this.failPutAt)
              throw new Error("crash: put failed");
            return target.put(key, body);
          };
        return Reflect.get(target, name, receiver) as unknown;
      },
    });
  }
}

/** `{id: n}` rows as SQL. */
function rowsSql(rows: readonly { id: number; n: number; seen?: string }[]): string {
  if (rows.length === 0)
    return `SELECT NULL::BIGINT AS id, NULL::TIMESTAMP AS seen, NULL::BIGINT AS n WHERE false`;
  return rows
    .map(
      (r) =>
        `SELECT (${r.id})::BIGINT AS id, TIMESTAMP '${r.seen ?? "2026-01-01 00:00:00"}' AS seen, ${r.n}::BIGINT AS n`,
    )
    .join(" UNION ALL ");
}

function keysSql(ids: readonly number[]): string {
  if (ids.length === 0) return `SELECT NULL::BIGINT AS id WHERE false`;
  return ids.map((id) => `SELECT (${id})::BIGINT AS id`).join(" UNION ALL ");
}

async function contents(
  version: StateVersion,
  load: "all" | number[] = "all",
): Promise<Record<number, number>> {
  const table = version.table("seen", schema, { timeColumn: "seen" });
  if (load === "all") await table.loadAll(sandbox, "__t");
  else await table.loadKeys(sandbox, keysSql(load), "__t");
  const rows = await sandbox.rows(`SELECT id, n FROM __t ORDER BY id`);
  return Object.fromEntries(rows.map((r) => [Number(r["id"]), Number(r["n"])]));
}

async function write(
  store: ObjectStore,
  parent: StateVersion,
  seq: number,
  ops: {
    upsert?: { id: number; n: number; seen?: string }[];
    /** Rows of keys the parent does not hold. */
    insert?: { id: number; n: number; seen?: string }[];
    delete?: number[];
    /** The parent's keys as the caller read them (`liveKeysRead`). */
    liveKeys?: number[];
  },
): Promise<StateVersion> {
  const writer = parent.writer();
  const table = parent.table("seen", schema, { timeColumn: "seen" });
  if (ops.upsert) writer.upsert(table, rowsSql(ops.upsert));
  if (ops.insert) writer.insert(table, rowsSql(ops.insert));
  if (ops.delete) writer.delete(table, keysSql(ops.delete));
  if (ops.liveKeys) writer.liveKeysRead(table, keysSql(ops.liveKeys));
  const { version } = await writer.commit(sandbox, seq);
  return openStateVersion({ store, flow, ...(version !== undefined ? { version } : {}) });
}

describe("the operator state store", () => {
  it("starts empty, and keeps each version's rows after later versions are written (immutable)", async () => {
    const store = new MemoryObjectStore();
    const empty = await openStateVersion({ store, flow });
    expect(await contents(empty)).toEqual({});
    const v1 = await write(store, empty, 1, {
      upsert: [
        { id: 1, n: 10 },
        { id: 2, n: 20 },
      ],
    });
    const v2 = await write(store, v1, 2, {
      upsert: [
        { id: 2, n: 21 },
        { id: 3, n: 30 },
      ],
      delete: [1],
    });
    expect(await contents(v2)).toEqual({ 2: 21, 3: 30 });
    expect(v2.metrics().rows).toBe(2);
    // v1 read again, by its key, after v2: unchanged (a rewind to it gets exactly it).
    const again = await openStateVersion({ store, flow, version: v1.key! });
    expect(await contents(again)).toEqual({ 1: 10, 2: 20 });
    expect(v2.manifest.parent).toBe(v1.key);
    expect(v2.key).toMatch(/^state\/p1\/dedup\/0000000002-[0-9a-f-]+\.json$/);
  });

  it("a batch reads only the buckets of the keys it touches", async () => {
    const inner = new MemoryObjectStore();
    const recording = new RecordingStore(inner);
    const store = recording.view();
    const many = Array.from({ length: 400 }, (_, i) => ({ id: i, n: i }));
    const v1 = await write(store, await openStateVersion({ store, flow }), 1, { upsert: many });
    expect(Object.keys(v1.manifest.tables["seen"]!.parts)).toHaveLength(16);
    const fresh = await openStateVersion({ store, flow, version: v1.key! });
    recording.gets.length = 0;
    expect(await contents(fresh, [7, 300])).toEqual({ 7: 7, 300: 300 });
    const dataReads = recording.gets.filter((k) => k.endsWith(".parquet"));
    expect(dataReads.length).toBeGreaterThanOrEqual(1);
    expect(dataReads.length).toBeLessThanOrEqual(2);
  });

  it("a bucket gets a snapshot once it has SNAPSHOT_EVERY changelogs, with the same rows", async () => {
    const store = new MemoryObjectStore();
    let version = await openStateVersion({ store, flow });
    for (let seq = 1; seq <= SNAPSHOT_EVERY + 1; seq++)
      version = await write(store, version, seq, { upsert: [{ id: 5, n: seq }] });
    const part = Object.values(version.manifest.tables["seen"]!.parts)[0]!;
    expect(part.snapshot).toBeDefined();
    expect(part.changelogs).toHaveLength(0);
    expect(await contents(version)).toEqual({ 5: SNAPSHOT_EVERY + 1 });
  });

  it("loadOlderThan reads only buckets whose oldest row is older than the bound", async () => {
    const store = new MemoryObjectStore();
    const recording = new RecordingStore(store);
    const view = recording.view();
    const v1 = await write(view, await openStateVersion({ store: view, flow }), 1, {
      upsert: [
        { id: 1, n: 1, seen: "2026-01-01 00:00:00" },
        ...Array.from({ length: 40 }, (_, i) => ({ id: 100 + i, n: i, seen: "2026-06-01 00:00:00" })),
      ],
    });
    recording.gets.length = 0;
    const table = v1.table("seen", schema, { timeColumn: "seen" });
    await table.loadOlderThan(sandbox, Date.UTC(2026, 2, 1) * 1000, "__old");
    expect((await sandbox.rows(`SELECT id FROM __old`)).map((r) => Number(r["id"]))).toEqual([1]);
    expect(recording.gets.filter((k) => k.endsWith(".parquet"))).toHaveLength(1);
  });

  it("deleting every row of a bucket drops it from the manifest", async () => {
    const store = new MemoryObjectStore();
    const v1 = await write(store, await openStateVersion({ store, flow }), 1, { upsert: [{ id: 1, n: 1 }] });
    const v2 = await write(store, v1, 2, { delete: [1] });
    expect(v2.manifest.tables["seen"]!.parts).toEqual({});
    expect(v2.metrics().rows).toBe(0);
  });

  it("a writer with nothing to write returns its parent's version and writes no file", async () => {
    const store = new MemoryObjectStore();
    const v1 = await write(store, await openStateVersion({ store, flow }), 1, { upsert: [{ id: 1, n: 1 }] });
    const before = (await listAllKeys(store, "state/")).length;
    const { version } = await v1.writer().commit(sandbox, 2);
    expect(version).toBe(v1.key);
    expect(await listAllKeys(store, "state/")).toHaveLength(before);
  });

  it("meta entries are versioned with the rows", async () => {
    const store = new MemoryObjectStore();
    const empty = await openStateVersion({ store, flow });
    const w = empty.writer();
    w.setMeta("watermark", { micros: 5 });
    const { version } = await w.commit(sandbox, 1);
    const v1 = await openStateVersion({ store, flow, version: version! });
    expect(v1.meta).toEqual({ watermark: { micros: 5 } });
    expect(empty.meta).toEqual({});
  });

  it("refuses a table opened with another shape, and a version that is gone", async () => {
    const store = new MemoryObjectStore();
    const v1 = await write(store, await openStateVersion({ store, flow }), 1, { upsert: [{ id: 1, n: 1 }] });
    const other: StateSchema = { key: [{ name: "id", type: "VARCHAR" }], value: [] };
    expect(() => v1.table("seen", other)).toThrow(IncompatibleStateError);
    expect(() => v1.table("seen", other)).toThrow(/reset the flow's checkpoint/);
    await store.delete(v1.key!);
    await expect(openStateVersion({ store, flow, version: v1.key! })).rejects.toThrow(
      StateVersionMissingError,
    );
  });

  it("a crash while writing leaves the parent intact; the retry converges to the same rows", async () => {
    const inner = new MemoryObjectStore();
    const v1 = await write(inner, await openStateVersion({ store: inner, flow }), 1, {
      upsert: Array.from({ length: 50 }, (_, i) => ({ id: i, n: i })),
    });
    const changes = {
      upsert: Array.from({ length: 30 }, (_, i) => ({ id: i * 2, n: 1000 + i })),
      delete: [1, 3],
    };
    for (let failAt = 1; failAt <= 20; failAt++) {
      const recording = new RecordingStore(inner);
      recording.failPutAt = failAt;
      const store = recording.view();
      const parent = await openStateVersion({ store, flow, version: v1.key! });
      const attempt = await write(store, parent, 2, changes).then(
        () => "done" as const,
        () => "crashed" as const,
      );
      // Whatever happened, v1 reads as before and a retry from it gives the right rows.
      expect(await contents(await openStateVersion({ store: inner, flow, version: v1.key! }))).toMatchObject({
        1: 1,
        3: 3,
      });
      const retried = await write(
        inner,
        await openStateVersion({ store: inner, flow, version: v1.key! }),
        2,
        changes,
      );
      const rows = await contents(retried);
      expect(rows[1]).toBeUndefined();
      expect(rows[4]).toBe(1002);
      expect(rows[5]).toBe(5);
      expect(Object.keys(rows)).toHaveLength(53);
      if (attempt === "done") break;
    }
  });

  it("VACUUM keeps every file of the live versions and young orphans, and deletes the rest", async () => {
    let now = 0;
    const store = new MemoryObjectStore(() => now);
    const v1 = await write(store, await openStateVersion({ store, flow }), 1, {
      upsert: [
        { id: 1, n: 1 },
        { id: 2, n: 2 },
      ],
    });
    const v2 = await write(store, v1, 2, { upsert: [{ id: 1, n: 11 }] });
    now = 10_000;
    const v3 = await write(store, v2, 3, { upsert: [{ id: 3, n: 3 }] });
    const plan = await vacuumFlowState({ store, flow, liveKeys: [v1.key!], now: 10_500, retentionMs: 1000 });
    // v1 and its files kept (a live point), v3 young; v2's own manifest and changelog removed.
    expect(plan.delete).toContain(v2.key);
    for (const key of [v1.key!, ...manifestFiles(v1.manifest), v3.key!]) expect(plan.keep).toContain(key);
    expect(await contents(await openStateVersion({ store, flow, version: v1.key! }))).toEqual({ 1: 1, 2: 2 });
    expect(planStateVacuum({ listing: [], liveFiles: new Set(), now: 0 })).toEqual({ keep: [], delete: [] });
  });

  it("a bucket whose live rows a batch all rewrites is one snapshot of them, and reads as a map model", async () => {
    // A view's pattern (its few groups all refreshed each batch), mixed with partial rewrites and
    // deletes of live keys: the shortcut that writes such a bucket without reading it must give the
    // rows, counts and oldest times the full merge gives.
    const step = fc.record({
      rewriteAll: fc.boolean(),
      upsert: fc.array(fc.integer({ min: 0, max: 24 }), { maxLength: 10 }),
      deletes: fc.array(fc.nat(), { maxLength: 3 }),
      n: fc.integer({ min: 0, max: 1000 }),
      day: fc.integer({ min: 1, max: 28 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 10 }), async (steps) => {
        const store = new MemoryObjectStore();
        let version = await openStateVersion({ store, flow });
        const model = new Map<number, { n: number; day: number }>();
        for (const [i, s] of steps.entries()) {
          const live = [...model.keys()];
          const deletes = [...new Set(s.deletes.map((d) => live[d % Math.max(live.length, 1)]!))].filter(
            (id) => id !== undefined,
          );
          const ids = [...new Set(s.rewriteAll ? [...live, ...s.upsert] : s.upsert)].filter(
            (id) => !deletes.includes(id),
          );
          const upsert = ids.map((id) => ({
            id,
            n: s.n + id,
            seen: `2026-02-${String(s.day).padStart(2, "0")} 00:00:00`,
          }));
          for (const r of upsert) model.set(r.id, { n: r.n, day: s.day });
          for (const id of deletes) model.delete(id);
          version = await write(store, version, i + 1, { upsert, delete: deletes });
        }
        expect(await contents(version)).toEqual(Object.fromEntries([...model].map(([id, r]) => [id, r.n])));
        expect(version.metrics().rows).toBe(model.size);
        for (const bound of [1, 10, 20, 29]) {
          await version
            .table("seen", schema, { timeColumn: "seen" })
            .loadOlderThan(sandbox, Date.UTC(2026, 1, bound) * 1000, "__old");
          const old = (await sandbox.rows(`SELECT id FROM __old ORDER BY id`)).map((r) => Number(r["id"]));
          expect(old).toEqual(
            [...model]
              .filter(([, r]) => r.day < bound)
              .map(([id]) => id)
              .sort((a, b) => a - b),
          );
        }
      }),
      { numRuns: 12 },
    );
  });

  it("a view-like state (every key rewritten each batch) stays one file per bucket", async () => {
    const store = new MemoryObjectStore();
    let version = await openStateVersion({ store, flow });
    for (let seq = 1; seq <= 5; seq++)
      version = await write(store, version, seq, {
        upsert: [0, 1, 2].map((id) => ({ id, n: seq * 10 + id })),
      });
    for (const part of Object.values(version.manifest.tables["seen"]!.parts)) {
      expect(part.snapshot).toBeDefined();
      expect(part.changelogs).toHaveLength(0);
    }
    expect(await contents(version)).toEqual({ 0: 50, 1: 51, 2: 52 });
  });

  it("equals a map model over random changes on a tree of versions (rewinds to any earlier version)", async () => {
    const op = fc.record({
      parent: fc.nat(),
      upsert: fc.array(
        fc.record({
          id: fc.integer({ min: 0, max: 40 }),
          n: fc.integer({ min: 0, max: 1000 }),
          day: fc.integer({ min: 1, max: 28 }),
        }),
        {
          maxLength: 8,
        },
      ),
      delete: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 4 }),
      // Only inserts: the upserted keys the parent does not hold, as the deduplicator writes them.
      inserts: fc.boolean(),
      // The parent's live keys given (every one, as a view has read them, or only the touched ones, as
      // AUTO CDC has): the bucket counts must come out as if the write had looked them up.
      known: fc.constantFrom(undefined, "all", "upserted"),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const store = new MemoryObjectStore();
        const versions: { version: StateVersion; model: Map<number, number>; days: Map<number, number> }[] = [
          { version: await openStateVersion({ store, flow }), model: new Map(), days: new Map() },
        ];
        for (const [i, step] of ops.entries()) {
          const from = versions[step.parent % versions.length]!;
          const upserts = [...new Map(step.upsert.map((r) => [r.id, r])).values()]
            .filter((r) => !step.inserts || !from.model.has(r.id))
            .map((r) => ({
              id: r.id,
              n: r.n,
              seen: `2026-02-${String(r.day).padStart(2, "0")} 00:00:00`,
            }));
          const deletes = step.inserts ? [] : step.delete;
          const model = new Map(from.model);
          const days = new Map(from.days);
          for (const r of upserts) model.set(r.id, r.n);
          for (const r of upserts) days.set(r.id, Number(r.seen.slice(8, 10)));
          for (const id of deletes) model.delete(id);
          for (const id of deletes) days.delete(id);
          const liveKeys = [...from.model.keys()].filter(
            (id) => step.known === "all" || upserts.some((r) => r.id === id) || deletes.includes(id),
          );
          const version = await write(
            store,
            from.version,
            i + 1,
            step.inserts
              ? { insert: upserts }
              : { upsert: upserts, delete: deletes, ...(step.known ? { liveKeys } : {}) },
          );
          versions.push({ version, model, days });
        }
        for (const [i, { version, model, days }] of versions.entries()) {
          expect(await contents(version)).toEqual(Object.fromEntries(model));
          expect(version.metrics().rows).toBe(model.size);
          // The buckets' oldest times may be bounds, never too new: every old row is found.
          const bound = 1 + (i % 28);
          await version
            .table("seen", schema, { timeColumn: "seen" })
            .loadOlderThan(sandbox, Date.UTC(2026, 1, bound) * 1000, "__old");
          const old = (await sandbox.rows(`SELECT id FROM __old ORDER BY id`)).map((r) => Number(r["id"]));
          // loadWhere: a key's newest row decides (an older row in range does not bring it back).
          await version
            .table("seen", schema, { timeColumn: "seen" })
            .loadWhere(sandbox, `seen >= TIMESTAMP '2026-02-${String(bound).padStart(2, "0")}'`, "__new");
          const young = (await sandbox.rows(`SELECT id FROM __new ORDER BY id`)).map((r) => Number(r["id"]));
          expect(young).toEqual(
            [...days]
              .filter(([, day]) => day >= bound)
              .map(([id]) => id)
              .sort((a, b) => a - b),
          );
          expect(old).toEqual(
            [...days]
              .filter(([, day]) => day < bound)
              .map(([id]) => id)
              .sort((a, b) => a - b),
          );
        }
      }),
      { numRuns: 15 },
    );
  });
});
