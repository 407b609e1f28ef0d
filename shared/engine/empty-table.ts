import { loadSnapshot, parseSchema, TableNotFoundError, type StructType } from "../delta/index.ts";
import type { DatasetCatalog } from "./dataset-catalog.ts";
import { previewFlowOutput } from "./flow-preview.ts";
import type { FlowRun } from "./micro-batch.ts";
import type { Sandbox } from "./sandbox.ts";
import { openOrCreateWith, type SinkTarget } from "./table-sink.ts";

/**
 * A streaming table whose flow has never had a batch is created empty, with the columns the flow's
 * query would write (flow-preview.ts), as Databricks creates it on the pipeline's first update: the
 * views and flows that read it then see zero rows instead of failing on a table that does not exist.
 * Left uncreated when the columns cannot be said before data arrives (an inferred file schema, a view
 * in the way) and for AUTO CDC and stream-stream join flows, whose tables their first batch shapes.
 */
export async function createEmptyTable(
  run: Pick<FlowRun, "catalog" | "dataset" | "flow" | "session">,
  target: SinkTarget,
  sandbox: () => Promise<Sandbox>,
): Promise<void> {
  if (run.flow.auto_cdc || run.flow.join) return;
  const schema = await previewFlowOutput(sandbox, run.catalog, run.dataset.name, run.flow, (name) =>
    tableSchema(run.catalog, name),
  );
  if (schema) await openOrCreateWith(target, run.session, async () => schema);
}

async function tableSchema(catalog: DatasetCatalog, name: string): Promise<StructType | undefined> {
  try {
    return parseSchema((await loadSnapshot(catalog.tableStore(name))).metadata.schemaString);
  } catch (error) {
    if (error instanceof TableNotFoundError) return undefined;
    throw error;
  }
}
