import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { ObjectNotFoundError } from "../../../shared/object-store/errors.ts";
import { LocalObjectStore } from "../../../shared/object-store/local-object-store.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { compareKeys } from "../../../shared/object-store/object-key.ts";
import { listAllKeys } from "../../../shared/object-store/object-store.ts";
import { withPrefix } from "../../../shared/object-store/prefixed-object-store.ts";
import { objectStoreContract } from "./object-store-contract.ts";

const roots: string[] = [];
async function freshStore(): Promise<LocalObjectStore> {
  const root = await mkdtemp(path.join(tmpdir(), "ebb-local-store-"));
  roots.push(root);
  return new LocalObjectStore(root);
}
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

objectStoreContract("LocalObjectStore", freshStore);

describe("LocalObjectStore on disk", () => {
  it("lists keys alone (listKeys) as its pages list them, through a prefixed view too", async () => {
    const store = await freshStore();
    const body = new TextEncoder().encode("x");
    for (const key of [
      "t/b/2.parquet",
      "t/a=1/1.parquet",
      "t/_delta_log/0.json",
      "u/3.parquet",
      "t/a=1/0.parquet",
    ])
      await store.put(key, body);
    const listed = (await listAllKeys(store, "t/")).map((o) => o.key);
    expect(await store.listKeys("t/")).toEqual(listed);
    expect(listed).toHaveLength(4);
    expect(await withPrefix(store, "t/").listKeys!("")).toEqual(listed.map((k) => k.slice(2)));
    expect(await store.listKeys("t/a")).toEqual(["t/a=1/0.parquet", "t/a=1/1.parquet"]);
  });

  it("maps keys to files under its root and leaves no temporary files behind", async () => {
    const store = await freshStore();
    await store.put("a/b/c.json", new TextEncoder().encode("{}"));
    expect(await store.putIfAbsent("a/b/c.json", new TextEncoder().encode("[]"))).toBe("exists");
    expect(await readdir(path.join(store.root, "a", "b"))).toEqual(["c.json"]);
  });

  it("lists, page by page, exactly the keys under a prefix after a key, in byte order, whatever the folders", async () => {
    // Segments that sort around "/" and each other ("a-b" < "a/" < "a0"), partition-like names, non-ASCII.
    const segment = fc.constantFrom("a", "a-b", "a0", "a.b", "b", "p=1", "p=10", "p=2", "_x", "é", "z");
    const key = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("/"));
    // A key cannot also be a folder: keep the shorter one.
    const keys = fc
      .uniqueArray(key, { minLength: 0, maxLength: 12 })
      .map((all) => all.filter((k) => !all.some((other) => other.startsWith(`${k}/`))));
    const boundary = fc.oneof(
      fc.constant(""),
      key,
      key.map((k) => `${k}/`),
      key.map((k) => k.slice(0, -1)),
    );
    await fc.assert(
      fc.asyncProperty(
        keys,
        boundary,
        fc.option(boundary, { nil: undefined }),
        fc.integer({ min: 1, max: 5 }),
        async (written, prefix, startAfter, pageSize) => {
          const store = await freshStore();
          await Promise.all(written.map((k) => store.put(k, new Uint8Array([1]))));
          const listed = (
            await listAllKeys(store, prefix, {
              pageSize,
              ...(startAfter === undefined ? {} : { startAfter }),
            })
          ).map((o) => o.key);
          const reference = written
            .filter(
              (k) => k.startsWith(prefix) && (startAfter === undefined || compareKeys(k, startAfter) > 0),
            )
            .sort(compareKeys);
          expect(listed).toEqual(reference);
          await rm(store.root, { recursive: true, force: true });
        },
      ),
      { numRuns: 150 },
    );
  });

  it("does not list folders as objects", async () => {
    const store = await freshStore();
    await store.put("dir/file", new Uint8Array([1]));
    expect((await store.list("")).objects.map((o) => o.key)).toEqual(["dir/file"]);
    expect(await store.head("dir")).toBeUndefined();
  });

  it("links an object to a local file, whose bytes a later write of the key leaves as they were", async () => {
    const store = await freshStore();
    const scratch = await ScratchFolder.create("ebb-test-");
    try {
      await store.put("landing/a.json", new TextEncoder().encode('{"v":1}\n'));
      const file = await scratch.take(withPrefix(store, "landing/"), "a.json", ".json");
      // The same inode: no byte was read or written (a copy would be a file of its own).
      expect((await stat(file)).ino).toBe((await stat(path.join(store.root, "landing", "a.json"))).ino);
      await store.put("landing/a.json", new TextEncoder().encode('{"v":2}\n'));
      expect(await readFile(file, "utf8")).toBe('{"v":1}\n');
      await expect(scratch.take(store, "landing/missing.json")).rejects.toBeInstanceOf(ObjectNotFoundError);
    } finally {
      await scratch.dispose();
    }
    // The folder's removal removes the link, not the object.
    expect(await store.get("landing/a.json")).toEqual(new TextEncoder().encode('{"v":2}\n'));
  });

  it("copies an object of a store that cannot link into a fresh local file", async () => {
    const store = new MemoryObjectStore(Date.now);
    const scratch = await ScratchFolder.create("ebb-test-");
    try {
      await store.put("k", new Uint8Array([1, 2, 3]));
      const file = await scratch.take(store, "k", ".bin");
      expect(path.dirname(file)).toBe(scratch.dir);
      expect(new Uint8Array(await readFile(file))).toEqual(new Uint8Array([1, 2, 3]));
    } finally {
      await scratch.dispose();
    }
  });
});
