import { previewFlowOutput } from "./flow-preview.ts";
import { readTableShape } from "./table-shape.ts";
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
  const schema = await previewFlowOutput(
    sandbox,
    run.catalog,
    run.dataset.name,
    run.flow,
    async (name) => (await readTableShape(run.catalog, name))?.schema,
  );
  if (schema) await openOrCreateWith(target, run.session, async () => schema);
}
