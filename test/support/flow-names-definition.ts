import type { PipelineDefinition } from "../../shared/pipeline/definition-schema.ts";

/**
 * A definition of streaming tables, each with its flows' names and nothing else: what the edit
 * warnings (replaced and moved flows) read of a definition.
 */
export function flowNamesDefinition(tables: Readonly<Record<string, readonly string[]>>): PipelineDefinition {
  return {
    name: "p",
    catalog: "c",
    schema: "s",
    datasets: Object.entries(tables).map(([name, flows]) => ({
      type: "streaming_table",
      name,
      flows: flows.map((flow) => ({ name: flow })),
    })),
  } as unknown as PipelineDefinition;
}
