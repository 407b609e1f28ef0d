import type { PipelineDefinition } from "./definition-schema.ts";

/**
 * The tables a pipeline owns: one per persisted dataset (streaming tables and materialized views; a
 * view stores nothing), by full name `catalog.schema.table`. A table has exactly one owner, so two
 * pipelines never write into one Delta table and a purge removes only its own.
 */
export function pipelineTables(definition: PipelineDefinition): string[] {
  return definition.datasets
    .filter((dataset) => dataset.type !== "view")
    .map((dataset) => `${definition.catalog}.${definition.schema}.${dataset.name}`)
    .sort();
}
