import type { DatasetDefinition, FlowDefinition } from "../pipeline/definition-schema.ts";
import { inRunOrder } from "../pipeline/pipeline-graph.ts";
import type { ValidatedPipeline } from "../pipeline/validate-pipeline.ts";

/**
 * The pipeline as the rewind domain sees it: datasets that hold a table (streaming tables and
 * materialized views; a view stores nothing and so is never restored or reset), the flows writing
 * each, and whether a flow reads a source outside the pipeline.
 */

export function datasetOf(pipeline: ValidatedPipeline, name: string): DatasetDefinition | undefined {
  return pipeline.definition.datasets.find((dataset) => dataset.name === name);
}

/** Datasets with a table, in run order (upstream first). */
export function tableDatasets(pipeline: ValidatedPipeline): string[] {
  return inRunOrder(
    pipeline.graph,
    pipeline.definition.datasets.filter((d) => d.type !== "view").map((d) => d.name),
  );
}

/** The flows writing `dataset` (none for a materialized view or a view). */
export function writersOf(pipeline: ValidatedPipeline, dataset: string): FlowDefinition[] {
  const definition = datasetOf(pipeline, dataset);
  return definition?.type === "streaming_table" ? [...definition.flows] : [];
}

/** Every flow with the dataset it writes, in run order. */
export function allFlows(pipeline: ValidatedPipeline): { flow: FlowDefinition; dataset: string }[] {
  return tableDatasets(pipeline).flatMap((dataset) =>
    writersOf(pipeline, dataset).map((flow) => ({ flow, dataset })),
  );
}

/** A flow's source described for messages when it lies outside the pipeline, else undefined. */
export function externalSource(flow: FlowDefinition): string | undefined {
  const source = flow.source;
  if (source.type === "stream") return undefined;
  if (source.type === "kafka")
    return `kafka ${source.topic ?? source.topics?.join(", ") ?? `/${source.pattern}/`}`;
  if (source.type === "kinesis") return `kinesis ${source.stream}`;
  return `${source.type} ${source.path}`;
}

/** `catalog.schema.name`. */
export function qualifiedName(pipeline: ValidatedPipeline, dataset: string): string {
  return `${pipeline.definition.catalog}.${pipeline.definition.schema}.${dataset}`;
}
