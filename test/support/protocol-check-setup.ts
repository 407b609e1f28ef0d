import { afterEach } from "vitest";
import { MemoryObjectStore } from "../../shared/object-store/memory-object-store.ts";

/**
 * After each test, the Delta tables of every in-memory store the test wrote a log file to are
 * checked against PROTOCOL.md (protocol-check.ts). The stores are noted by observing their writes;
 * what they store and return is unchanged.
 */

const written = new Set<MemoryObjectStore>();
const observed = ["put", "putIfAbsent", "putIfMatch"] as const;
for (const method of observed) {
  const original = MemoryObjectStore.prototype[method] as (
    this: MemoryObjectStore,
    key: string,
    ...rest: never[]
  ) => Promise<unknown>;
  Object.defineProperty(MemoryObjectStore.prototype, method, {
    configurable: true,
    writable: true,
    value: function (this: MemoryObjectStore, key: string, ...rest: never[]) {
      if (key.includes("_delta_log/")) written.add(this);
      return original.call(this, key, ...rest);
    },
  });
}

afterEach(async () => {
  const stores = [...written];
  written.clear();
  if (stores.length === 0) return;
  // Loaded on first use: it brings the S3 client, which many of the files this runs in never load.
  const { assertTablesConform } = await import("./protocol-check.ts");
  for (const store of stores) await assertTablesConform(store, "an in-memory store of this test");
});
