import type { DuckRow } from "../../../shared/duck/duck-session.ts";
import type { StructField, StructType } from "../../../shared/delta/table/schema.ts";
import type { ObjectStore } from "../../../shared/object-store/object-store.ts";

/** Shared fixtures for the Delta writer tests. */

export const T0 = Date.parse("2026-01-01T00:00:00Z");

/** A clock that advances `step` ms per reading. */
export function steppingClock(start = T0, step = 1000): () => number & { advance?: never } {
  let now = start - step;
  return () => (now += step);
}

/** A clock that only moves when told. */
export class ManualClock {
  constructor(public now = T0) {}
  readonly read = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

export function field(name: string, type: StructField["type"], nullable = true): StructField {
  return { name, type, nullable, metadata: {} };
}

export function schemaOf(...fields: StructField[]): StructType {
  return { type: "struct", fields };
}

/** `{id, value}` rows as plain comparable objects, sorted by id. */
export function byId(rows: readonly DuckRow[]): Record<string, unknown>[] {
  return rows
    .map((row) =>
      Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : v])),
    )
    .sort((a, b) => Number(a.id) - Number(b.id) || compareText(JSON.stringify(a), JSON.stringify(b)));
}

/** Rows of one id in a fixed order too, so two reads of the same rows always compare equal. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** An object store that records the keys it gets, heads and lists, wrapping another. */
export function countingStore(inner: ObjectStore): {
  store: ObjectStore;
  gets: string[];
  heads: string[];
  listed: string[];
} {
  const gets: string[] = [];
  const heads: string[] = [];
  const listed: string[] = [];
  const store: ObjectStore = {
    get: (key) => {
      gets.push(key);
      return inner.get(key);
    },
    getRange: (key, range) => {
      gets.push(key);
      return inner.getRange(key, range);
    },
    put: (key, body) => inner.put(key, body),
    putIfAbsent: (key, body) => inner.putIfAbsent(key, body),
    putIfMatch: (key, body, etag) => inner.putIfMatch(key, body, etag),
    list: async (prefix, options) => {
      const page = await inner.list(prefix, options);
      listed.push(...page.objects.map((object) => object.key));
      return page;
    },
    head: (key) => {
      heads.push(key);
      return inner.head(key);
    },
    delete: (key) => inner.delete(key),
    deleteMany: (keys) => inner.deleteMany(keys),
  };
  return { store, gets, heads, listed };
}
