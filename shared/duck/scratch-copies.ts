import type { ObjectStore } from "../store/object-store.ts";
import type { ScratchFolder } from "./scratch-folder.ts";

/** Objects fetched at once. */
const FETCH_CONCURRENCY = 8;

/**
 * Copies objects from `store` into `scratch` so DuckDB can read them as local files; returns the
 * local path of each key, in the order given. Keys are never used as local names.
 */
export async function copyToScratch(
  store: ObjectStore,
  keys: readonly string[],
  scratch: ScratchFolder,
  extension = ".parquet",
): Promise<string[]> {
  const paths: string[] = new Array<string>(keys.length);
  for (let i = 0; i < keys.length; i += FETCH_CONCURRENCY) {
    await Promise.all(
      keys.slice(i, i + FETCH_CONCURRENCY).map(async (key, j) => {
        paths[i + j] = await scratch.write(await store.get(key), extension);
      }),
    );
  }
  return paths;
}
