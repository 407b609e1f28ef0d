import type { FlowDefinition, PipelineDefinition } from "./definition-schema.ts";
import type { DefinitionIssue } from "./errors.ts";
import type { SqlAnalysis } from "./sql-references.ts";

/**
 * Rules of AUTO CDC flows across fields and datasets (the fields themselves: auto-cdc-schema.ts):
 *
 * 1. `apply_as_deletes` and `apply_as_truncates` are each exactly one SQL condition on an event (no
 *    subquery, no clause): they are spliced into the engine's SQL.
 * 2. `pipelines.cdc.tombstoneGCThresholdInSeconds` on a target is a whole number of seconds.
 * 3. A target written by an AUTO CDC flow is written by that flow only. Its rows are owned by key
 *    and ordered by the flow's per-key sequence state, which an append flow (or a second AUTO CDC flow,
 *    whose sequence state would be its own) would bypass.
 */
/** How long an SCD type 1 target remembers a delete (Databricks' table property). */
export const TOMBSTONE_PROPERTY = "pipelines.cdc.tombstoneGCThresholdInSeconds";

export async function autoCdcIssues(
  definition: PipelineDefinition,
  analyzeCondition: (condition: string) => Promise<SqlAnalysis>,
): Promise<DefinitionIssue[]> {
  const issues: DefinitionIssue[] = [];
  for (const [d, dataset] of definition.datasets.entries()) {
    if (dataset.type !== "streaming_table") continue;
    const cdcFlows = dataset.flows.filter((flow) => flow.auto_cdc);
    const tombstones = dataset.properties?.[TOMBSTONE_PROPERTY];
    if (tombstones !== undefined && !/^\d+$/.test(tombstones.trim()))
      issues.push({
        path: `datasets[${d}].properties[${JSON.stringify(TOMBSTONE_PROPERTY)}]`,
        message: `${JSON.stringify(tombstones)} is not a whole number of seconds (e.g. "172800", two days: how long a delete is remembered, so a late older update stays deleted)`,
      });
    if (cdcFlows.length > 0 && dataset.flows.length > 1) {
      const others = dataset.flows.filter((flow) => flow !== cdcFlows[0]).map((flow) => `"${flow.name}"`);
      issues.push({
        path: `datasets[${d}].flows`,
        message: `"${dataset.name}" is the target of AUTO CDC flow "${cdcFlows[0]!.name}", so no other flow may write it (${others.join(", ")} do): give each its own table, or union the change feeds in one flow's SQL`,
      });
    }
    for (const [f, flow] of dataset.flows.entries()) {
      for (const key of ["apply_as_deletes", "apply_as_truncates"] as const) {
        const text = flow.auto_cdc?.[key];
        if (text === undefined) continue;
        const analysis = await analyzeCondition(text);
        if (!analysis.ok)
          issues.push({
            path: `datasets[${d}].flows[${f}].auto_cdc.${key}`,
            message: `${key} of flow "${flow.name}" is not a SQL condition on the change events' columns (e.g. "operation = 'DELETE'"): ${analysis.message}`,
          });
      }
    }
  }
  return issues;
}

/**
 * Whether `flow` reads its source's change data feed: as its options say, else when it streams from
 * the target of an AUTO CDC flow (whose commits update and delete rows, which an append-only reader
 * could not follow).
 */
export function readsChangeFeed(definition: PipelineDefinition, flow: FlowDefinition): boolean {
  const explicit = flow.options?.read_change_feed;
  if (explicit !== undefined) return explicit;
  if (flow.source.type !== "stream") return false;
  const upstream = flow.source.dataset;
  return definition.datasets.some(
    (dataset) =>
      dataset.name === upstream &&
      dataset.type === "streaming_table" &&
      dataset.flows.some((f) => f.auto_cdc !== undefined),
  );
}
