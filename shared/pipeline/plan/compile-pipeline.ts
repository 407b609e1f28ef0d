import type { PipelineDefinition } from "../definition-schema.ts";
import type { PipelineGraph } from "../pipeline-graph.ts";
import { unqualify } from "../sql-text/index.ts";
import { compileFlow } from "./compile-flow.ts";
import { compileView } from "./compile-view.ts";
import type { FlowPlan } from "./flow-plan.ts";
import type { SqlCompiler } from "./sql-compiler.ts";
import type { ViewPlan } from "./view-plan.ts";

/** A validated pipeline's plans: one per flow and one per materialized view, by name. */
export interface PipelinePlans {
  readonly flows: ReadonlyMap<string, FlowPlan>;
  readonly views: ReadonlyMap<string, ViewPlan>;
}

/**
 * Compiles every flow and materialized view of a validated definition (validate-pipeline.ts runs it
 * once per definition version; the engine then executes plans and reads no SQL structure itself).
 * `statements`: each query's parse tree by its path in the definition, as validation parsed it.
 */
export async function compilePipeline(
  definition: PipelineDefinition,
  graph: PipelineGraph,
  statements: ReadonlyMap<string, unknown>,
  sql: SqlCompiler,
): Promise<PipelinePlans> {
  const namespace = { catalog: definition.catalog, schema: definition.schema };
  const bare = (path: string) => {
    const statement = structuredClone(statements.get(path));
    unqualify(statement, namespace);
    return statement;
  };
  const flows = new Map<string, FlowPlan>();
  const views = new Map<string, ViewPlan>();
  for (const [d, dataset] of definition.datasets.entries()) {
    if (dataset.type === "streaming_table") {
      for (const [f, flow] of dataset.flows.entries())
        flows.set(flow.name, await compileFlow(flow, bare(`datasets[${d}].flows[${f}].sql`), sql));
    } else if (dataset.type === "materialized_view") {
      const read = graph.edges
        .filter((edge) => edge.to === dataset.name && edge.kind === "read")
        .map((edge) => definition.datasets.find((candidate) => candidate.name === edge.from)!);
      const reads = {
        tables: read.filter((r) => r.type !== "view").map((r) => r.name),
        readsView: read.some((r) => r.type === "view"),
      };
      views.set(dataset.name, await compileView(dataset, bare(`datasets[${d}].sql`), reads, sql));
    }
  }
  return { flows, views };
}
