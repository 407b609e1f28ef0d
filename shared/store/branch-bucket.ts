import { LOG_DIR } from "../delta/index.ts";
import type { ObjectInfo, ObjectStore } from "../object-store/object-store.ts";
import { branchFolder } from "./bucket-layout.ts";

/**
 * The pipelines' bucket as an update on a branch sees it (docs/branches.md "Replay on a branch"):
 * the same keys, except that the log of each of the pipeline's tables (`<table folder>_delta_log/…`)
 * is the branch's (`<table folder>_branches/<name>/_delta_log/…`), as `branchTableStore` is for one
 * table. So every step of the update reads and writes the branch's logs through the code live runs,
 * and its data files land in the table's folder, where the branch's log names them.
 *
 * A branch never deletes a table's data files: they may be live's, or named by live's log. The
 * table's VACUUM removes those no log names.
 */
export function branchBucket(
  bucket: ObjectStore,
  tableFolders: readonly string[],
  branch: string,
): ObjectStore {
  const folder = branchFolder(branch);
  const tableOf = (key: string) => tableFolders.find((table) => key.startsWith(table));
  const toBranch = (key: string) => {
    const table = tableOf(key);
    return table !== undefined && key.startsWith(table + LOG_DIR)
      ? table + folder + key.slice(table.length)
      : key;
  };
  const fromBranch = (info: ObjectInfo): ObjectInfo => {
    const table = tableOf(info.key);
    return table !== undefined && info.key.startsWith(table + folder + LOG_DIR)
      ? { ...info, key: table + info.key.slice(table.length + folder.length) }
      : info;
  };
  const deletable = (key: string) => tableOf(key) === undefined || toBranch(key) !== key;
  return {
    get: (key) => bucket.get(toBranch(key)),
    getRange: (key, range) => bucket.getRange(toBranch(key), range),
    put: (key, body) => bucket.put(toBranch(key), body),
    ...(bucket.putParts
      ? {
          putParts: (key: string, parts: AsyncIterable<Uint8Array>) => bucket.putParts!(toBranch(key), parts),
        }
      : {}),
    putIfAbsent: (key, body) => bucket.putIfAbsent(toBranch(key), body),
    putIfMatch: (key, body, etag) => bucket.putIfMatch(toBranch(key), body, etag),
    async list(prefix, options = {}) {
      const page = await bucket.list(toBranch(prefix), {
        ...options,
        ...(options.startAfter !== undefined ? { startAfter: toBranch(options.startAfter) } : {}),
      });
      return { ...page, objects: page.objects.map(fromBranch) };
    },
    async head(key) {
      const info = await bucket.head(toBranch(key));
      return info && fromBranch(info);
    },
    ...(bucket.copyToFile
      ? { copyToFile: (key: string, file: string) => bucket.copyToFile!(toBranch(key), file) }
      : {}),
    ...(bucket.localFile ? { localFile: (key: string) => bucket.localFile!(toBranch(key)) } : {}),
    delete: async (key) => {
      if (deletable(key)) await bucket.delete(toBranch(key));
    },
    deleteMany: (keys) => bucket.deleteMany(keys.filter(deletable).map(toBranch)),
  };
}
