import type { ObjectStore } from "../../shared/object-store/object-store.ts";

/**
 * The store behind a slow link: every byte written (`put`, `putParts`) goes through one lane at
 * `bytesPerSecond`, as a function's uploads do when S3 or the network lags. Reads are as fast as
 * the store. A writer that does not wait for its uploads piles up what they have not taken yet.
 */
export function slowUploads(store: ObjectStore, bytesPerSecond: number): ObjectStore {
  let lane: Promise<void> = Promise.resolve();
  const through = (bytes: number): Promise<void> => {
    const turn = lane.then(
      () => new Promise<void>((resolve) => setTimeout(resolve, (bytes / bytesPerSecond) * 1000)),
    );
    lane = turn;
    return turn;
  };
  const slowed: ObjectStore = {
    get: (key) => store.get(key),
    getRange: (key, range) => store.getRange(key, range),
    put: async (key, body) => {
      await through(body.byteLength);
      return store.put(key, body);
    },
    putIfAbsent: (key, body) => store.putIfAbsent(key, body),
    putIfMatch: (key, body, etag) => store.putIfMatch(key, body, etag),
    list: (prefix, options) => store.list(prefix, options),
    head: (key) => store.head(key),
    delete: (key) => store.delete(key),
    deleteMany: (keys) => store.deleteMany(keys),
  };
  if (store.putParts) {
    const putParts = store.putParts.bind(store);
    return {
      ...slowed,
      putParts: (key, parts) =>
        putParts(
          key,
          (async function* () {
            for await (const part of parts) {
              await through(part.byteLength);
              yield part;
            }
          })(),
        ),
    };
  }
  return slowed;
}
