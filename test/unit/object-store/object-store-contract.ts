import { describe, expect, it } from "vitest";
import { InvalidKeyError, ObjectNotFoundError } from "../../../shared/object-store/errors.ts";
import { listAllKeys, type ObjectStore } from "../../../shared/object-store/object-store.ts";
import { withPrefix } from "../../../shared/object-store/prefixed-object-store.ts";
import { compareKeys } from "../../../shared/object-store/object-key.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (body: Uint8Array) => new TextDecoder().decode(body);

/**
 * The ObjectStore contract (shared/store/object-store.ts), run against every adapter. `create`
 * returns a fresh, empty store for each test.
 */
export function objectStoreContract(name: string, create: () => Promise<ObjectStore>): void {
  describe(`${name} honours the ObjectStore contract`, () => {
    it("reads back what was put, whole and by range", async () => {
      const store = await create();
      await store.put("a/b.txt", bytes("hello world"));
      expect(text(await store.get("a/b.txt"))).toBe("hello world");
      expect(text(await store.getRange("a/b.txt", { start: 6, end: 10 }))).toBe("world");
      expect(text(await store.getRange("a/b.txt", { start: 6, end: 100 }))).toBe("world");
      expect(text(await store.getRange("a/b.txt", { suffix: 3 }))).toBe("rld");
      expect(text(await store.getRange("a/b.txt", { suffix: 100 }))).toBe("hello world");
    });

    it("throws ObjectNotFoundError for a missing key and undefined from head", async () => {
      const store = await create();
      await expect(store.get("missing")).rejects.toThrow(ObjectNotFoundError);
      await expect(store.getRange("missing", { start: 0, end: 1 })).rejects.toThrow(ObjectNotFoundError);
      expect(await store.head("missing")).toBeUndefined();
    });

    it("reports size, modification time and an etag that changes with each write", async () => {
      const store = await create();
      const first = await store.put("k", bytes("one"));
      const info = await store.head("k");
      expect(info).toMatchObject({ key: "k", size: 3, etag: first.etag });
      expect(info!.lastModified).toBeGreaterThan(0);
      const second = await store.put("k", bytes("two"));
      expect(second.etag).not.toBe(first.etag);
      expect((await store.head("k"))!.etag).toBe(second.etag);
    });

    it("putIfAbsent creates once and never overwrites", async () => {
      const store = await create();
      expect(await store.putIfAbsent("_delta_log/00000000000000000000.json", bytes("first"))).toBe("created");
      expect(await store.putIfAbsent("_delta_log/00000000000000000000.json", bytes("second"))).toBe("exists");
      expect(text(await store.get("_delta_log/00000000000000000000.json"))).toBe("first");
    });

    it("lets exactly one of many concurrent putIfAbsent calls win", async () => {
      const store = await create();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.putIfAbsent("race", bytes(`writer ${i}`))),
      );
      expect(results.filter((r) => r === "created")).toHaveLength(1);
      const winner = results.indexOf("created");
      expect(text(await store.get("race"))).toBe(`writer ${winner}`);
    });

    it("putIfMatch writes only on the current etag", async () => {
      const store = await create();
      const { etag } = await store.put("k", bytes("v1"));
      const written = await store.putIfMatch("k", bytes("v2"), etag);
      expect(written.outcome).toBe("written");
      expect(await store.putIfMatch("k", bytes("v3"), etag)).toEqual({ outcome: "etag-mismatch" });
      expect(text(await store.get("k"))).toBe("v2");
      expect(await store.putIfMatch("absent", bytes("x"), etag)).toEqual({ outcome: "etag-mismatch" });
      expect(await store.head("absent")).toBeUndefined();
    });

    it("lets exactly one of concurrent putIfMatch calls on the same etag win", async () => {
      const store = await create();
      const { etag } = await store.put("k", bytes("base"));
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => store.putIfMatch("k", bytes(`w${i}`), etag)),
      );
      expect(results.filter((r) => r.outcome === "written")).toHaveLength(1);
    });

    it("lists keys under a prefix in UTF-8 byte order, with startAfter and pages", async () => {
      const store = await create();
      const keys = ["t/b", "t/a/2", "t/a/10", "t/é", "t/Z", "t/z", "u/x", "t.txt"];
      for (const key of keys) await store.put(key, bytes(key));
      const listed = (await listAllKeys(store, "t/")).map((o) => o.key);
      expect(listed).toEqual(["t/Z", "t/a/10", "t/a/2", "t/b", "t/z", "t/é"]);
      const after = (await listAllKeys(store, "t/", { startAfter: "t/a/2" })).map((o) => o.key);
      expect(after).toEqual(["t/b", "t/z", "t/é"]);
      const first = await store.list("t/", { pageSize: 2 });
      expect(first.objects.map((o) => o.key)).toEqual(["t/Z", "t/a/10"]);
      expect(first.nextPageToken).toBeDefined();
      const paged = (await listAllKeys(store, "t/", { pageSize: 2 })).map((o) => o.key);
      expect(paged).toEqual(listed);
      expect((await listAllKeys(store, "t/a")).map((o) => o.key)).toEqual(["t/a/10", "t/a/2"]);
      expect((await store.list("nothing/")).objects).toEqual([]);
    });

    it("deletes one or many keys, missing keys included", async () => {
      const store = await create();
      await store.put("d/1", bytes("1"));
      await store.put("d/2", bytes("2"));
      await store.put("d/3", bytes("3"));
      await store.delete("d/1");
      await store.delete("d/never");
      await store.deleteMany(["d/2", "d/never"]);
      expect((await listAllKeys(store, "d/")).map((o) => o.key)).toEqual(["d/3"]);
    });

    it("deletes many keys at once, exactly those named, missing ones included", async () => {
      const store = await create();
      const keys = Array.from({ length: 250 }, (_, i) => `m/p=${i}/f-${i}`);
      for (const key of keys) await store.put(key, bytes(key));
      const doomed = keys.filter((_, i) => i % 3 !== 0);
      await store.deleteMany([...doomed, "m/p=1/never", "m/never"]);
      const kept = keys.filter((_, i) => i % 3 === 0).sort(compareKeys);
      expect((await listAllKeys(store, "m/")).map((o) => o.key)).toEqual(kept);
    });

    it("refuses keys that could escape the store", async () => {
      const store = await create();
      for (const key of ["", "/abs", "a/../b", "..", "a\\b"]) {
        await expect(store.put(key, bytes("x")), key).rejects.toThrow(InvalidKeyError);
      }
    });

    it("works through a prefixed view", async () => {
      const store = await create();
      const table = withPrefix(store, "tables/t1/");
      await table.put("_delta_log/00000000000000000000.json", bytes("{}"));
      await store.put("tables/t2/_delta_log/00000000000000000000.json", bytes("{}"));
      expect((await listAllKeys(table, "_delta_log/")).map((o) => o.key)).toEqual([
        "_delta_log/00000000000000000000.json",
      ]);
      expect(await store.head("tables/t1/_delta_log/00000000000000000000.json")).toBeDefined();
    });
  });
}
