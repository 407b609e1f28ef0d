import { describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { snapshotTombstones } from "../../../shared/delta/log/log-replay.ts";
import { forgetDecodedCheckpoints } from "../../../shared/delta/read/checkpoint-cache.ts";
import { loadSnapshot } from "../../../shared/delta/read/snapshot-loader.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import type { ObjectStore } from "../../../shared/object-store/object-store.ts";
import { field, ManualClock, schemaOf } from "./delta-test-kit.ts";

/** The keys a store view is asked to GET. */
function gets(inner: ObjectStore): { store: ObjectStore; keys: string[] } {
  const keys: string[] = [];
  const store: ObjectStore = {
    ...inner,
    get: (key) => {
      keys.push(key);
      return inner.get(key);
    },
    getRange: inner.getRange.bind(inner),
    put: inner.put.bind(inner),
    putIfAbsent: inner.putIfAbsent.bind(inner),
    putIfMatch: inner.putIfMatch.bind(inner),
    list: inner.list.bind(inner),
    head: inner.head.bind(inner),
    delete: inner.delete.bind(inner),
    deleteMany: inner.deleteMany.bind(inner),
  };
  return { store, keys };
}

const CHECKPOINT = "_delta_log/00000000000000000002.checkpoint.parquet";

/** A table whose version 2 is checkpointed, holding `ids` over three commits. */
async function checkpointed(store: ObjectStore, ids: readonly [number, number, number]) {
  const clock = new ManualClock();
  const table = await DeltaTable.create(
    store,
    {
      schema: schemaOf(field("id", "long")),
      properties: { "delta.checkpointInterval": "2" },
      rows: { rows: [{ id: ids[0] }] },
    },
    { clock: clock.read },
  );
  await table.append({ rows: [{ id: ids[1] }] });
  await table.append({ rows: [{ id: ids[2] }] });
  await table.close();
}

async function allKeys(store: ObjectStore): Promise<string[]> {
  return (await store.list("")).objects.map((object) => object.key);
}

describe("decoded checkpoints, kept for the process", () => {
  it("are decoded once for every load of the same checkpoint, and afresh for a table made anew under the same name", async () => {
    const memory = new MemoryObjectStore();
    await checkpointed(memory, [1, 2, 3]);
    const { store, keys } = gets(memory);

    const first = await loadSnapshot(store);
    expect(first.version).toBe(2);
    expect(keys).toContain(CHECKPOINT);
    keys.length = 0;
    const again = await loadSnapshot(store);
    expect(keys).not.toContain(CHECKPOINT);
    expect([...again.files.keys()]).toEqual([...first.files.keys()]);

    // Dropped and created again: the same checkpoint name, other contents.
    await memory.deleteMany(await allKeys(memory));
    await checkpointed(memory, [7, 8, 9]);
    keys.length = 0;
    const anew = await loadSnapshot(store);
    expect(keys).toContain(CHECKPOINT);
    expect(anew.metadata.id).not.toBe(first.metadata.id);
    expect([...anew.files.keys()].sort()).not.toEqual([...first.files.keys()].sort());
  });

  it("read a checkpoint's tombstones when asked for, from the bytes the load fetched", async () => {
    const memory = new MemoryObjectStore();
    const clock = new ManualClock();
    const table = await DeltaTable.create(
      memory,
      {
        schema: schemaOf(field("id", "long")),
        properties: { "delta.checkpointInterval": "2" },
        rows: { rows: [{ id: 1 }] },
      },
      { clock: clock.read },
    );
    await table.delete("id = 1");
    await table.append({ rows: [{ id: 2 }] });
    await table.close();
    const { store, keys } = gets(memory);
    forgetDecodedCheckpoints();
    const snapshot = await loadSnapshot(store);
    expect(snapshot.commitTombstones.size).toBe(0);
    keys.length = 0;
    expect((await snapshotTombstones(snapshot)).size).toBe(1);
    expect(keys).toEqual([]);
  });
});
