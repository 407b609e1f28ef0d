import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable, loadSnapshot } from "../../../shared/delta/index.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { SourceUnavailableError } from "../../../shared/engine/errors.ts";
import { planTableSource } from "../../../shared/engine/table-stream-source.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import type { ObjectStore } from "../../../shared/object-store/object-store.ts";
import { field, ManualClock, schemaOf } from "../delta/delta-test-kit.ts";

/**
 * The I/O side of a table stream's plan: it reads the log from the reader's offset, up to the latest
 * version or to the snapshot it is given (a materialized view plans up to the version it records),
 * and a log whose retention removed commits the reader still needs is refused by name.
 */

const schema = schemaOf(field("id", "long", false));
/** A commit's file, as PROTOCOL.md "Delta Log Entries" names it. */
const commitKey = (version: number) => `_delta_log/${String(version).padStart(20, "0")}.json`;

describe("planTableSource", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  async function threeAppends() {
    const clock = new ManualClock();
    const store = new MemoryObjectStore(clock.read);
    const table = await DeltaTable.create(
      store,
      { schema, rows: { rows: [{ id: 0 }] } },
      { clock: clock.read, duck },
    );
    for (const id of [1, 2, 3]) await table.append({ rows: [{ id }] });
    const tableId = table.snapshot.metadata.id;
    await table.close();
    return { store, tableId };
  }
  const after = (tableId: string, version: number) =>
    ({ kind: "table", tableId, nextVersion: version + 1, rowsRead: 0 }) as const;

  it("plans up to the snapshot it is given, not past it", async () => {
    const { store, tableId } = await threeAppends();
    const latest = await planTableSource({ store, flow: "f", upstream: "t" }, after(tableId, 0), {});
    expect(latest!.slices.map((s) => s.version)).toEqual([1, 2, 3]);
    const snapshot = await loadSnapshot(store, { version: 2 });
    const atTwo = await planTableSource({ store, flow: "f", upstream: "t", snapshot }, after(tableId, 0), {});
    expect(atTwo!.slices.map((s) => s.version)).toEqual([1, 2]);
    expect(atTwo!.end.nextVersion).toBe(3);
  });

  it("refuses a reader whose next commits the log no longer holds, naming the first one gone", async () => {
    const { store: full, tableId } = await threeAppends();
    // The log as its cleanup leaves it (the table in the store stays whole for the protocol check).
    const gone = new Set([commitKey(1), commitKey(2)]);
    const store: ObjectStore = {
      get: (key) => full.get(key),
      getRange: (key, range) => full.getRange(key, range),
      put: (key, body) => full.put(key, body),
      putIfAbsent: (key, body) => full.putIfAbsent(key, body),
      putIfMatch: (key, body, etag) => full.putIfMatch(key, body, etag),
      list: async (prefix, options) => {
        const page = await full.list(prefix, options);
        return { ...page, objects: page.objects.filter((o) => !gone.has(o.key)) };
      },
      head: (key) => full.head(key),
      delete: (key) => full.delete(key),
      deleteMany: (keys) => full.deleteMany(keys),
    };
    // The latest snapshot as a checkpoint would give it: only the commits after it are listed.
    const snapshot = await loadSnapshot(full);
    const source = { store, flow: "f", upstream: "t", snapshot };
    const refused = planTableSource(source, after(tableId, 0), {});
    await expect(refused).rejects.toThrow(SourceUnavailableError);
    await expect(refused).rejects.toThrow(/version 1 of t's log is gone \(removed by its log retention/);
    // A reader past the gap reads on.
    const onward = await planTableSource(source, after(tableId, 2), {});
    expect(onward!.slices.map((s) => s.version)).toEqual([3]);
  });
});
