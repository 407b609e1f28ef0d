import type { ObjectStore } from "../object-store/object-store.ts";

/** Characters DuckDB's file readers take for a glob pattern: a path holding one is not read as named. */
const GLOB_CHARACTERS = /[*?[\]{}]/;

/**
 * The local files of `keys` for DuckDB to read where they are (`ObjectStore.localFile`), in the order
 * given; `undefined` where the store has none or a path would read as a glob, and the caller puts the
 * objects in a scratch folder instead (`copyToScratch`). Keys that do not exist are collected and
 * `missing` (given their indexes, ascending) says what that means, as `copyToScratch` does. A file
 * removed after this check (a concurrent VACUUM) fails DuckDB's read: `missingNow` tells the caller
 * which, to answer as it would have here.
 */
export function filesInPlace(
  store: ObjectStore,
  keys: readonly string[],
  missing: (indexes: readonly number[]) => Error,
): string[] | undefined {
  const localFile = store.localFile?.bind(store);
  if (!localFile) return undefined;
  const absent: number[] = [];
  const paths = keys.map((key, i) => {
    const file = localFile(key);
    if (file === undefined) absent.push(i);
    return file ?? "";
  });
  if (absent.length > 0) throw missing(absent);
  return paths.some((file) => GLOB_CHARACTERS.test(file)) ? undefined : paths;
}

/** The indexes of `keys` whose objects are gone now, ascending (after `filesInPlace` found them all). */
export function missingNow(store: ObjectStore, keys: readonly string[]): number[] {
  return keys.flatMap((key, i) => (store.localFile?.(key) === undefined ? [i] : []));
}
