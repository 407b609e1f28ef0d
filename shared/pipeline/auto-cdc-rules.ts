import type { FlowDefinition, PipelineDefinition } from "./definition-schema.ts";
import type { AutoCdcDefinition } from "./auto-cdc-schema.ts";
import { DEFINITION_ISSUE_CODES, type DefinitionIssue } from "./errors.ts";
import type { SqlAnalysis } from "./sql-references.ts";

/**
 * Rules of AUTO CDC flows across fields and datasets (the fields themselves: auto-cdc-schema.ts):
 *
 * 1. `apply_as_deletes` and `apply_as_truncates` are each exactly one SQL condition on an event (no
 *    subquery, no clause): they are spliced into the engine's SQL.
 * 2. `pipelines.cdc.tombstoneGCThresholdInSeconds` on a target is a whole number of seconds.
 * 3. A target written by AUTO CDC flows is written by AUTO CDC flows only: its rows are owned by key
 *    and ordered by sequence, which an append flow would bypass. Several AUTO CDC flows may write it
 *    (a backfill and a live feed, as on Databricks), each from its own source with its own
 *    checkpoint and state, when they agree on what orders the rows: the same keys, SCD type and
 *    sequence_by, and (type 2) the same history tracking and null handling. Their events are then
 *    applied as one set, by sequence, whichever flow read them.
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
    if (cdcFlows.length > 0 && cdcFlows.length < dataset.flows.length) {
      const others = dataset.flows.filter((flow) => !flow.auto_cdc).map((flow) => `"${flow.name}"`);
      issues.push({
        path: `datasets[${d}].flows`,
        message: `"${dataset.name}" is the target of AUTO CDC flow "${cdcFlows[0]!.name}", so only AUTO CDC flows may write it (${others.join(", ")} do not): make them AUTO CDC flows with the same keys and sequence_by, give them their own table, or union the change feeds in one flow's SQL`,
      });
    }
    const [first, ...rest] = cdcFlows;
    for (const flow of rest) {
      const differs = ordering(first!.auto_cdc!)
        .map((value, i) => [value, ordering(flow.auto_cdc!)[i]!, ORDERING_FIELDS[i]!] as const)
        .filter(([a, b]) => a !== b)
        .map(([a, b, field]) => `${field} ${b} (flow "${first!.name}": ${a})`);
      if (differs.length > 0)
        issues.push({
          path: `datasets[${d}].flows[${dataset.flows.indexOf(flow)}].auto_cdc`,
          code: DEFINITION_ISSUE_CODES.autoCdcFlowsIncompatible,
          message: `AUTO CDC flows "${first!.name}" and "${flow.name}" both write "${dataset.name}" but order its rows differently: "${flow.name}" has ${differs.join(", ")}. Flows into one target must agree on keys, stored_as_scd_type, sequence_by, track_history_* and ignore_null_updates: align them, or give each its own table`,
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

const ORDERING_FIELDS = [
  "keys",
  "stored_as_scd_type",
  "sequence_by",
  "track_history_column_list",
  "track_history_except_column_list",
  "ignore_null_updates",
] as const;

/** What flows into one target must agree on, as comparable text (key order does not matter). */
function ordering(cdc: AutoCdcDefinition): string[] {
  const text = (value: unknown) => (value === undefined ? "(not set)" : JSON.stringify(value));
  return [
    text([...cdc.keys].sort()),
    text(cdc.stored_as_scd_type),
    text(typeof cdc.sequence_by === "string" ? [cdc.sequence_by] : cdc.sequence_by),
    text(cdc.track_history_column_list),
    text(cdc.track_history_except_column_list),
    text(cdc.ignore_null_updates),
  ];
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
