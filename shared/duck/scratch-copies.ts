import { ObjectNotFoundError } from "../object-store/errors.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import type { ScratchFolder } from "./scratch-folder.ts";

/** Objects fetched at once. */
const FETCH_CONCURRENCY = 8;

/**
 * Copies objects from `store` into `scratch` so DuckDB can read them as local files; returns the
 * local path of each key, in the order given. Keys are never used as local names. Keys that do not
 * exist are collected, and `missing` (given their indexes, ascending) says what that means to the
 * caller (a Delta reader: files VACUUM removed); without it the first one fails the copy.
 */
export async function copyToScratch(
  store: ObjectStore,
  keys: readonly string[],
  scratch: ScratchFolder,
  extension = ".parquet",
  missing?: (indexes: readonly number[]) => Error,
): Promise<string[]> {
  const paths: string[] = new Array<string>(keys.length);
  const absent: number[] = [];
  for (let i = 0; i < keys.length; i += FETCH_CONCURRENCY) {
    await Promise.all(
      keys.slice(i, i + FETCH_CONCURRENCY).map(async (key, j) => {
        try {
          paths[i + j] = await scratch.write(await store.get(key), extension);
        } catch (error) {
          if (!(missing && error instanceof ObjectNotFoundError)) throw error;
          absent.push(i + j);
        }
      }),
    );
  }
  if (missing && absent.length > 0) throw missing(absent.sort((a, b) => a - b));
  return paths;
}
