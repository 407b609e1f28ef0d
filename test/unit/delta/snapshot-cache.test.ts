import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaTable } from "../../../shared/delta/delta-table.ts";
import { currentSnapshot } from "../../../shared/delta/read/snapshot-cache.ts";
import { loadSnapshot } from "../../../shared/delta/read/snapshot-loader.ts";
import { DuckSession } from "../../../shared/duck/duck-session.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { listAllKeys, type ObjectStore } from "../../../shared/object-store/object-store.ts";
import { withPrefix } from "../../../shared/object-store/prefixed-object-store.ts";
import { field, ManualClock, schemaOf } from "./delta-test-kit.ts";

/** Counts every request a store view receives. */
function counted(inner: ObjectStore): { store: ObjectStore; requests: string[] } {
  const requests: string[] = [];
  const methods = [
    "get",
    "getRange",
    "put",
    "putIfAbsent",
    "putIfMatch",
    "list",
    "head",
    "delete",
    "deleteMany",
  ];
  const store = Object.fromEntries(
    methods.map((name) => [
      name,
      (...args: unknown[]) => {
        requests.push(`${name} ${String(args[0])}`);
        return (inner as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!(...args);
      },
    ]),
  ) as unknown as ObjectStore;
  return { store, requests };
}

describe("one snapshot per table view", () => {
  let duck: DuckSession;
  beforeAll(async () => {
    duck = await DuckSession.open();
  });
  afterAll(() => duck.close());

  it("loads once, then reads only the commits after the version held; a commit on the view is not read back", async () => {
    const clock = new ManualClock();
    const memory = new MemoryObjectStore(clock.read);
    const writer = await DeltaTable.create(
      memory,
      { schema: schemaOf(field("id", "long")), rows: { rows: [{ id: 1 }] } },
      { clock: clock.read, duck },
    );
    for (let i = 2; i <= 5; i++) await writer.append({ rows: [{ id: i }] });
    const { store, requests } = counted(memory);

    const first = await currentSnapshot(store);
    expect(first.version).toBe(4);
    const loadRequests = requests.length;
    expect(loadRequests).toBeGreaterThan(5); // _last_checkpoint, the listing, five commits

    requests.length = 0;
    expect(await currentSnapshot(store)).toBe(first);
    expect(requests).toEqual(["get _delta_log/00000000000000000005.json"]); // nothing new: one GET

    await writer.append({ rows: [{ id: 6 }] }); // another view commits
    requests.length = 0;
    const advanced = await currentSnapshot(store);
    expect(advanced.version).toBe(5);
    expect(requests).toEqual([
      "get _delta_log/00000000000000000005.json",
      "get _delta_log/00000000000000000006.json",
    ]);
    expect(advanced.files).toEqual((await loadSnapshot(memory)).files);

    // A commit through this view is remembered: the next read asks only for the version after it.
    const table = await DeltaTable.open(store, { clock: clock.read, duck, snapshot: advanced });
    await table.append({ rows: [{ id: 7 }] });
    requests.length = 0;
    expect((await currentSnapshot(store)).version).toBe(6);
    expect(requests).toEqual(["get _delta_log/00000000000000000007.json"]);
    await table.close();
    await writer.close();
  });

  it("a new view of the same folder (a warm process's next task) lists once and reads only the commits since", async () => {
    const clock = new ManualClock();
    const memory = new MemoryObjectStore(clock.read);
    const { store: root, requests } = counted(memory);
    const writer = await DeltaTable.create(
      withPrefix(memory, "tables/t/"),
      { schema: schemaOf(field("id", "long")), rows: { rows: [{ id: 1 }] } },
      { clock: clock.read, duck },
    );
    for (let i = 2; i <= 4; i++) await writer.append({ rows: [{ id: i }] });
    const first = await currentSnapshot(withPrefix(root, "tables/t/"));
    expect(first.version).toBe(3);

    requests.length = 0;
    expect(await currentSnapshot(withPrefix(root, "tables/t/"))).toBe(first);
    expect(requests).toEqual(["list tables/t/_delta_log/"]);

    await writer.append({ rows: [{ id: 5 }] });
    await writer.append({ rows: [{ id: 6 }] });
    requests.length = 0;
    const advanced = await currentSnapshot(withPrefix(root, "tables/t/"));
    expect(advanced.version).toBe(5);
    expect(requests).toEqual([
      "list tables/t/_delta_log/",
      "get tables/t/_delta_log/00000000000000000004.json",
      "get tables/t/_delta_log/00000000000000000005.json",
    ]);
    expect(advanced.files).toEqual((await loadSnapshot(withPrefix(memory, "tables/t/"))).files);
    await writer.close();
  });

  it("a newer checkpoint is read only when it takes fewer GETs than the commits since, planned from the same listing", async () => {
    const clock = new ManualClock();
    const memory = new MemoryObjectStore(clock.read);
    const { store: root, requests } = counted(memory);
    const writer = await DeltaTable.create(
      withPrefix(memory, "tables/t/"),
      {
        schema: schemaOf(field("id", "long")),
        rows: { rows: [{ id: 0 }] },
        properties: { "delta.checkpointInterval": "4" },
      },
      { clock: clock.read, duck },
    );
    const view = () => withPrefix(root, "tables/t/");
    // A checkpoint's adds say `dataChange: false`: the files compare by path.
    const paths = (snapshot: { files: ReadonlyMap<string, unknown> }) => [...snapshot.files.keys()].sort();
    const fresh = () => loadSnapshot(withPrefix(memory, "tables/t/"));
    for (let i = 1; i <= 2; i++) await writer.append({ rows: [{ id: i }] });
    expect((await currentSnapshot(view())).version).toBe(2);

    // Two commits since (3, and 4 with its checkpoint): the commits, as cheap as checkpoint + commit 4.
    for (let i = 3; i <= 4; i++) await writer.append({ rows: [{ id: i }] });
    requests.length = 0;
    const near = await currentSnapshot(view());
    expect(near.version).toBe(4);
    expect(requests).toEqual([
      "list tables/t/_delta_log/",
      "get tables/t/_delta_log/00000000000000000003.json",
      "get tables/t/_delta_log/00000000000000000004.json",
    ]);
    expect(paths(near)).toEqual(paths(await fresh()));

    // Five commits since (5 to 9, a checkpoint at 8): the checkpoint and commit 9, no hint, no second LIST.
    for (let i = 5; i <= 9; i++) await writer.append({ rows: [{ id: i }] });
    requests.length = 0;
    const far = await currentSnapshot(view());
    expect(far.version).toBe(9);
    expect(requests).toEqual([
      "list tables/t/_delta_log/",
      "get tables/t/_delta_log/00000000000000000008.checkpoint.parquet",
      "get tables/t/_delta_log/00000000000000000009.json",
    ]);
    expect(paths(far)).toEqual(paths(await fresh()));
    expect(far.metadata).toEqual((await fresh()).metadata);

    // And it is remembered with its commit's ETag: nothing new is one LIST.
    requests.length = 0;
    expect((await currentSnapshot(view())).version).toBe(9);
    expect(requests).toEqual(["list tables/t/_delta_log/"]);
    await writer.close();
  });

  it("a table dropped and made anew under the same folder is loaded afresh, however many versions it has", async () => {
    const clock = new ManualClock();
    const memory = new MemoryObjectStore(clock.read);
    const make = async (ids: number[]) => {
      const table = await DeltaTable.create(
        withPrefix(memory, "tables/t/"),
        { schema: schemaOf(field("id", "long")), rows: { rows: [{ id: ids[0]! }] } },
        { clock: clock.read, duck },
      );
      for (const id of ids.slice(1)) await table.append({ rows: [{ id }] });
      await table.close();
    };
    await make([1, 2, 3]);
    const before = await currentSnapshot(withPrefix(memory, "tables/t/"));
    await memory.deleteMany((await listAllKeys(memory, "tables/t/")).map((o) => o.key));
    await make([7, 8, 9, 10]); // the old version 2 is a different commit file now, and more follow
    const after = await currentSnapshot(withPrefix(memory, "tables/t/"));
    const fresh = await loadSnapshot(withPrefix(memory, "tables/t/"));
    expect(after.version).toBe(3);
    expect(after.metadata.id).toBe(fresh.metadata.id);
    expect(after.metadata.id).not.toBe(before.metadata.id);
    expect(after.files).toEqual(fresh.files);
  });
});
