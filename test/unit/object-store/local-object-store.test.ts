import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ScratchFolder } from "../../../shared/duck/scratch-folder.ts";
import { ObjectNotFoundError } from "../../../shared/object-store/errors.ts";
import { LocalObjectStore } from "../../../shared/object-store/local-object-store.ts";
import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
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
  it("maps keys to files under its root and leaves no temporary files behind", async () => {
    const store = await freshStore();
    await store.put("a/b/c.json", new TextEncoder().encode("{}"));
    expect(await store.putIfAbsent("a/b/c.json", new TextEncoder().encode("[]"))).toBe("exists");
    expect(await readdir(path.join(store.root, "a", "b"))).toEqual(["c.json"]);
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
