import { LOG_DIR } from "../delta/index.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { withPrefix } from "../object-store/prefixed-object-store.ts";
import { branchFolder } from "./bucket-layout.ts";

/**
 * A branch's view of one table (docs/branches.md "Where a branch lives"): the table's folder, except
 * that its `_delta_log/` is the branch's (`_branches/<name>/_delta_log/`). Every Delta reader and
 * writer of Ebb works through it unchanged: the branch's data files are written beside live's, and
 * its log names them, and the point's files, by the same relative paths live's log would.
 */
export function branchTableStore(table: ObjectStore, branch: string): ObjectStore {
  const log = withPrefix(table, branchFolder(branch));
  const of = (key: string) => (key.startsWith(LOG_DIR) ? log : table);
  return {
    get: (key) => of(key).get(key),
    getRange: (key, range) => of(key).getRange(key, range),
    put: (key, body) => of(key).put(key, body),
    ...(table.putParts
      ? { putParts: (key: string, parts: AsyncIterable<Uint8Array>) => of(key).putParts!(key, parts) }
      : {}),
    putIfAbsent: (key, body) => of(key).putIfAbsent(key, body),
    putIfMatch: (key, body, etag) => of(key).putIfMatch(key, body, etag),
    // A listing of the table root would mix live's folder in: Ebb lists only the log, or data folders.
    list: (prefix, options) => of(prefix).list(prefix, options),
    head: (key) => of(key).head(key),
    delete: (key) => of(key).delete(key),
    async deleteMany(keys) {
      await log.deleteMany(keys.filter((key) => key.startsWith(LOG_DIR)));
      await table.deleteMany(keys.filter((key) => !key.startsWith(LOG_DIR)));
    },
  };
}
