import { afterEach } from "vitest";
import { MemoryObjectStore } from "../../shared/object-store/memory-object-store.ts";

/**
 * After each test, the Delta tables of every in-memory store the test wrote a log file to are
 * checked against PROTOCOL.md (protocol-check.ts). The stores are noted by observing their writes;
 * what they store and return is unchanged.
 */

// Without isolation (vitest.config.ts's unit project) this file runs again before each test file in
// the same process, over the same cached class: its writes are observed once, into one set kept on it.
const WRITTEN = Symbol.for("ebb.protocol-check.written");
const holder = MemoryObjectStore.prototype as { [WRITTEN]?: Set<MemoryObjectStore> };
const written = holder[WRITTEN] ?? observeWrites();

function observeWrites(): Set<MemoryObjectStore> {
  const stores = new Set<MemoryObjectStore>();
  holder[WRITTEN] = stores;
  for (const method of ["put", "putIfAbsent", "putIfMatch"] as const) {
    const original = MemoryObjectStore.prototype[method] as (
      this: MemoryObjectStore,
      key: string,
      ...rest: never[]
    ) => Promise<unknown>;
    Object.defineProperty(MemoryObjectStore.prototype, method, {
      configurable: true,
      writable: true,
      value: function (this: MemoryObjectStore, key: string, ...rest: never[]) {
        if (key.includes("_delta_log/")) stores.add(this);
        return original.call(this, key, ...rest);
      },
    });
  }
  return stores;
}

afterEach(async () => {
  const stores = [...written];
  written.clear();
  if (stores.length === 0) return;
  // Loaded on first use: it brings the S3 client, which many of the files this runs in never load.
  const { assertTablesConform } = await import("./protocol-check.ts");
  for (const store of stores) await assertTablesConform(store, "an in-memory store of this test");
});
