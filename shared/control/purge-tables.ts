import type { PipelineDefinition } from "../pipeline/definition-schema.ts";
import { listAllKeys, type ObjectStore } from "../store/object-store.ts";

/**
 * `DELETE …?purge=true` (api.md): every object of the pipeline's tables
 * (`tables/<catalog>/<schema>/<name>/`) is deleted. Without purge the tables stay, readable by any
 * Delta reader.
 */
export async function purgeTables(bucket: ObjectStore, definition: PipelineDefinition): Promise<number> {
  let deleted = 0;
  for (const dataset of definition.datasets) {
    const prefix = `tables/${definition.catalog}/${definition.schema}/${dataset.name}/`;
    const keys = (await listAllKeys(bucket, prefix)).map((info) => info.key);
    await bucket.deleteMany(keys);
    deleted += keys.length;
  }
  return deleted;
}
