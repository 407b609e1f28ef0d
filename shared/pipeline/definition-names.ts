import type { DefinitionIssue } from "./errors.ts";
import type { PipelineDefinition } from "./definition-schema.ts";
import { MICRO_BATCH_NAME } from "./dataset-references.ts";

/**
 * Rules on names across the definition. Flow names are unique in the pipeline (not just per dataset)
 * because a flow's checkpoints are keyed `<pipelineId>#<flow>`; a flow may share its name only with
 * the dataset it writes (Databricks' default flow name), so a selection by name is never ambiguous.
 */
export function nameIssues(definition: PipelineDefinition): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const datasetAt = new Map<string, number>();
  definition.datasets.forEach((dataset, d) => {
    const first = datasetAt.get(dataset.name);
    if (first !== undefined) {
      issues.push({
        path: `datasets[${d}].name`,
        message: `two datasets are named "${dataset.name}" (datasets[${first}] and datasets[${d}]): dataset names must be unique`,
      });
    } else {
      datasetAt.set(dataset.name, d);
    }
    if (dataset.name === MICRO_BATCH_NAME) {
      issues.push({
        path: `datasets[${d}].name`,
        message: `"${MICRO_BATCH_NAME}" is reserved: in a flow's SQL it means the micro-batch; choose another dataset name`,
      });
    }
  });

  const flowAt = new Map<string, string>();
  definition.datasets.forEach((dataset, d) => {
    if (dataset.type !== "streaming_table") return;
    dataset.flows.forEach((flow, f) => {
      const path = `datasets[${d}].flows[${f}].name`;
      const first = flowAt.get(flow.name);
      if (first !== undefined) {
        issues.push({
          path,
          message: `two flows are named "${flow.name}" (${first} and ${path}): flow names must be unique in the pipeline`,
        });
      } else {
        flowAt.set(flow.name, path);
      }
      if (flow.name !== dataset.name && datasetAt.has(flow.name)) {
        issues.push({
          path,
          message: `flow "${flow.name}" of dataset "${dataset.name}" has the name of another dataset: a flow may share its name only with the dataset it writes`,
        });
      }
    });
  });
  return issues;
}
