import { assertValidPrefix } from "./object-key.ts";
import type { ByteRange, ListOptions, ListPage, ObjectInfo, ObjectStore } from "./object-store.ts";

/**
 * A view of `inner` rooted at `prefix` (ending in `/`): keys given and returned are relative to it.
 * A Delta table is read and written through the view of its root folder.
 */
export function withPrefix(inner: ObjectStore, prefix: string): ObjectStore {
  assertValidPrefix(prefix);
  if (prefix === "") return inner;
  const strip = (info: ObjectInfo): ObjectInfo => ({ ...info, key: info.key.slice(prefix.length) });
  const view: ObjectStore = {
    get: (key) => inner.get(prefix + key),
    getRange: (key, range: ByteRange) => inner.getRange(prefix + key, range),
    put: (key, body) => inner.put(prefix + key, body),
    ...(inner.putParts
      ? {
          putParts: (key: string, parts: AsyncIterable<Uint8Array>) => inner.putParts!(prefix + key, parts),
        }
      : {}),
    putIfAbsent: (key, body) => inner.putIfAbsent(prefix + key, body),
    putIfMatch: (key, body, etag) => inner.putIfMatch(prefix + key, body, etag),
    async list(listPrefix: string, options: ListOptions = {}): Promise<ListPage> {
      const page = await inner.list(prefix + listPrefix, {
        ...options,
        ...(options.startAfter !== undefined ? { startAfter: prefix + options.startAfter } : {}),
      });
      return { ...page, objects: page.objects.map(strip) };
    },
    ...(inner.listKeys
      ? {
          listKeys: async (listPrefix: string) =>
            (await inner.listKeys!(prefix + listPrefix)).map((key) => key.slice(prefix.length)),
        }
      : {}),
    async head(key) {
      const info = await inner.head(prefix + key);
      return info && strip(info);
    },
    ...(inner.copyToFile
      ? { copyToFile: (key: string, file: string) => inner.copyToFile!(prefix + key, file) }
      : {}),
    ...(inner.localFile ? { localFile: (key: string) => inner.localFile!(prefix + key) } : {}),
    delete: (key) => inner.delete(prefix + key),
    deleteMany: (keys) => inner.deleteMany(keys.map((k) => prefix + k)),
  };
  const base = rootOf(inner);
  roots.set(view, { store: base.store, prefix: base.prefix + prefix });
  return view;
}

/** Where a view is rooted: the store it was made from and the whole prefix (`""` for a store itself). */
export interface StoreRoot {
  readonly store: ObjectStore;
  readonly prefix: string;
}

const roots = new WeakMap<ObjectStore, StoreRoot>();

/** Two views of the same folder of the same store have the same root, however they were made. */
export function rootOf(store: ObjectStore): StoreRoot {
  return roots.get(store) ?? { store, prefix: "" };
}
