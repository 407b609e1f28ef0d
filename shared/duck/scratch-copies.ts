import { ObjectNotFoundError } from "../object-store/errors.ts";
import { mapInParallel } from "../object-store/map-in-parallel.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import type { ScratchFolder } from "./scratch-folder.ts";

/** Objects fetched at once. */
const FETCH_CONCURRENCY = 8;

/**
 * Puts objects from `store` into `scratch` so DuckDB can read them as local files (`take`: a local
 * folder's are linked, not read and written); returns the local path of each key, in the order given. Keys are never used as local names. Keys that do not
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
  const absent: number[] = [];
  const paths = await mapInParallel([...keys.keys()], FETCH_CONCURRENCY, async (i) => {
    try {
      return await scratch.take(store, keys[i]!, extension);
    } catch (error) {
      if (!(missing && error instanceof ObjectNotFoundError)) throw error;
      absent.push(i);
      return "";
    }
  });
  if (missing && absent.length > 0) throw missing(absent.sort((a, b) => a - b));
  return paths;
}
