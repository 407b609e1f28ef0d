import type { PipelineDefinition } from "../../pipeline/definition-schema.ts";
import { loadSnapshot } from "../../delta/index.ts";
import { tablePrefix } from "../../store/bucket-layout.ts";
import { withPrefix } from "../../object-store/prefixed-object-store.ts";
import { TableExistsError } from "../../store/errors.ts";
import type { ControlPlane } from "../plane/control-plane.ts";

/**
 * A streaming table a pipeline declares that no pipeline owns must not already hold rows its flows
 * did not write: its flows would start from empty checkpoints and append their sources' rows again
 * beside the old ones. Such a table is one kept when its pipeline was deleted without purge (or
 * written by hand). A materialized view is not refused: each refresh makes its whole contents from
 * its inputs. On an edit, a table this pipeline's own flows wrote (a dataset removed and declared
 * again) is its own.
 */
export async function refuseUnownedTables(
  plane: ControlPlane,
  definition: PipelineDefinition,
  options: { readonly pipelineId?: string; readonly known?: ReadonlySet<string> } = {},
): Promise<void> {
  const existing: { table: string; prefix: string }[] = [];
  for (const dataset of definition.datasets) {
    if (dataset.type !== "streaming_table") continue;
    const full = `${definition.catalog}.${definition.schema}.${dataset.name}`;
    // Owned: this pipeline's, or another live one's (refused by the claim, naming the owner). A claim
    // left by a pipeline deleted part-way is no owner.
    if (options.known?.has(full)) continue;
    const owner = await plane.pipelines.tableOwner(full);
    if (owner !== undefined && (await plane.pipelines.get(owner)) !== undefined) continue;
    const prefix = tablePrefix({
      catalog: definition.catalog,
      schema: definition.schema,
      table: dataset.name,
    });
    const log = await plane.bucket.list(`${prefix}_delta_log/`, { pageSize: 1 });
    if (log.objects.length === 0) continue;
    if (options.pipelineId !== undefined) {
      const snapshot = await loadSnapshot(withPrefix(plane.bucket, prefix));
      const mine = [...snapshot.txns.keys()].some((appId) => appId.startsWith(`${options.pipelineId}/`));
      if (mine) continue;
    }
    existing.push({ table: full, prefix });
  }
  if (existing.length > 0) throw new TableExistsError(existing);
}
