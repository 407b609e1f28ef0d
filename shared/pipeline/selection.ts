import type { ValidatedPipeline } from "./validate-pipeline.ts";
import { UnknownSelectionError } from "./errors.ts";
import { inRunOrder } from "./pipeline-graph.ts";

/**
 * Which datasets and flows a request applies to (`selection`, `refresh_selection`,
 * `full_refresh_selection`, `reset_checkpoint_selection`; semantics.md "Refresh and reset"). Names are
 * case-insensitive and may be qualified (`catalog.schema.table`); none means everything.
 */

export interface FlowRef {
  readonly flow: string;
  readonly dataset: string;
}

export interface Selection {
  /** Datasets selected as a whole, in run order. */
  readonly datasets: readonly string[];
  /** Every selected flow: the flows of selected datasets and flows named on their own. */
  readonly flows: readonly FlowRef[];
}

/** Every flow of the pipeline, in definition order. */
export function flowsOf(pipeline: ValidatedPipeline): FlowRef[] {
  return pipeline.definition.datasets.flatMap((dataset) =>
    dataset.type === "streaming_table"
      ? dataset.flows.map((flow) => ({ flow: flow.name, dataset: dataset.name }))
      : [],
  );
}

/**
 * Resolves names to datasets and flows. A name is a dataset's first (a flow may share its name only
 * with the dataset it writes, so this is never ambiguous), else a flow's. Unknown names fail together,
 * naming `field`, the request's field that sent them.
 */
export function selectByName(
  pipeline: ValidatedPipeline,
  names?: readonly string[],
  field = "selection",
): Selection {
  const allFlows = flowsOf(pipeline);
  const datasetNames = pipeline.graph.datasets;
  if (names === undefined || names.length === 0)
    return { datasets: inRunOrder(pipeline.graph, datasetNames), flows: allFlows };

  const datasets = new Set<string>();
  const flows = new Set<string>();
  const unknown: string[] = [];
  for (const raw of names) {
    const name = unqualified(raw, pipeline);
    if (name !== undefined && datasetNames.includes(name)) {
      datasets.add(name);
      for (const ref of allFlows) if (ref.dataset === name) flows.add(ref.flow);
    } else if (name !== undefined && allFlows.some((ref) => ref.flow === name)) {
      flows.add(name);
    } else {
      unknown.push(raw);
    }
  }
  if (unknown.length > 0) {
    throw new UnknownSelectionError(field, unknown, [
      ...datasetNames,
      ...allFlows.map((ref) => ref.flow).filter((flow) => !datasetNames.includes(flow)),
    ]);
  }
  return {
    datasets: inRunOrder(pipeline.graph, datasets),
    flows: allFlows.filter((ref) => flows.has(ref.flow)),
  };
}

/** `Main.Sales.Orders` → `orders` when the prefix is this pipeline's; undefined when it is not. */
function unqualified(raw: string, pipeline: ValidatedPipeline): string | undefined {
  const parts = raw.trim().toLowerCase().split(".");
  const { catalog, schema } = pipeline.definition;
  if (parts.length === 1) return parts[0];
  if (parts.length === 2 && parts[0] === schema) return parts[1];
  if (parts.length === 3 && parts[0] === catalog && parts[1] === schema) return parts[2];
  return undefined;
}
