import { performance } from "node:perf_hooks";
import { DuckSession } from "../../shared/duck/duck-session.ts";
import { Sandbox } from "../../shared/engine/sandbox.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";
import { MemoryObjectStore } from "../../shared/object-store/memory-object-store.ts";

/**
 * Wall-clock spans of an update's DuckDB statements, sandboxes and object-store calls, for
 * `profile-increment.ts`, `profile-update.ts` and `../profile-replay.ts` (EBB_TRACE=1), with each kind
 * of call counted: a CPU profile shows the main thread, mostly idle while DuckDB
 * and the file system work, so where an update's time goes needs the calls' own durations.
 */
const spans: { start: number; ms: number; what: string }[] = [];
const calls = new Map<string, number>();
let origin = 0;

export function reset(): void {
  spans.length = 0;
  calls.clear();
  origin = performance.now();
}

type Method = (...args: unknown[]) => Promise<unknown>;

function wrap(owner: object, name: string, label: (args: unknown[]) => string): void {
  const methods = owner as Record<string, Method | undefined>;
  const original = methods[name];
  if (!original) return;
  methods[name] = async function (this: unknown, ...args: unknown[]) {
    const start = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      const what = label(args);
      const kind = what.split(" ")[0]!;
      calls.set(kind, (calls.get(kind) ?? 0) + 1);
      spans.push({ start: start - origin, ms: performance.now() - start, what });
    }
  };
}

const sql = (args: unknown[]) => String(args[0]).replace(/\s+/g, " ").slice(0, 140);
wrap(DuckSession.prototype, "run", (a) => `duck.run ${sql(a)}`);
wrap(DuckSession.prototype, "rows", (a) => `duck.rows ${sql(a)}`);
wrap(Sandbox, "open", () => "Sandbox.open");
wrap(Sandbox.prototype, "close", () => "Sandbox.close");
const STORE_METHODS = [
  "get",
  "getRange",
  "put",
  "putIfAbsent",
  "putIfMatch",
  "list",
  "head",
  "delete",
  "deleteMany",
  "copy",
];
for (const store of [LocalObjectStore, MemoryObjectStore])
  for (const name of STORE_METHODS)
    wrap(store.prototype, name, (a) => `store.${name} ${String(a[0]).slice(-90)}`);

/**
 * Prints the spans of at least `min` ms since `reset`, in the order they started; with a `label`,
 * first the calls counted by kind, and every sandbox's open and close whatever its span.
 */
export function dump(min = 2, label?: string): void {
  if (label) console.log(`--- ${label}: calls ${JSON.stringify(Object.fromEntries(calls))}`);
  for (const s of spans.sort((a, b) => a.start - b.start))
    if (s.ms >= min || (label && s.what.startsWith("Sandbox")))
      console.log(`${s.start.toFixed(0).padStart(6)} +${s.ms.toFixed(1).padStart(7)}  ${s.what}`);
}
