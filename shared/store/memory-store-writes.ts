import type { StoreWrite } from "./store-writes.ts";

/**
 * The memory adapters' `StoreWrite`: a condition and the change it guards, both synchronous, so a
 * set of them is checked and then applied with nothing in between (all or none, as a transaction).
 */
export interface MemoryWrite {
  /** Whether the write may be made (its condition holds). */
  readonly check: () => boolean;
  readonly apply: () => void;
}

export function memoryWrite(write: MemoryWrite): StoreWrite {
  return { memory: write } as unknown as StoreWrite;
}

/** Applies every write if every check holds; answers whether they were applied. */
export function applyMemoryWrites(writes: readonly StoreWrite[]): boolean {
  const memory = writes.map((write) => {
    const inner = (write as unknown as { memory?: MemoryWrite }).memory;
    if (!inner) throw new TypeError("a memory repository was given another adapter's write");
    return inner;
  });
  if (!memory.every((write) => write.check())) return false;
  for (const write of memory) write.apply();
  return true;
}
