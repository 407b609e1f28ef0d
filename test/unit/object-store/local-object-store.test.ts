import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalObjectStore } from "../../../shared/object-store/local-object-store.ts";
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
});
