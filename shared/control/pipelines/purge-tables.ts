import { tablePrefix } from "../../store/bucket-layout.ts";
import { listAllKeys, type ObjectStore } from "../../object-store/object-store.ts";

/**
 * `DELETE …?purge=true` (api.md): every object of the tables the pipeline owned
 * (`tables/<catalog>/<schema>/<name>/`, names from the owner registry, never from the definition
 * alone: a table another pipeline owns is never touched). Without purge the tables stay, readable by
 * any Delta reader.
 */
export async function purgeTables(bucket: ObjectStore, tables: readonly string[]): Promise<number> {
  let deleted = 0;
  for (const table of tables) {
    const [catalog = "", schema = "", name = ""] = table.split(".");
    const prefix = tablePrefix({ catalog, schema, table: name });
    const keys = (await listAllKeys(bucket, prefix)).map((info) => info.key);
    await bucket.deleteMany(keys);
    deleted += keys.length;
  }
  return deleted;
}
