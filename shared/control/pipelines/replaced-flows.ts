import { loadSnapshot, statsRecordCount, TableNotFoundError } from "../../delta/index.ts";
import type { PipelineDefinition } from "../../pipeline/definition-schema.ts";
import { ROOT_SEQ } from "../../store/checkpoints-repository.ts";
import { flowRef, type RewindEnvironment } from "../../rewind/rewind-environment.ts";

/**
 * An edit that replaces the flows writing a streaming table (renames them, say): a flow's checkpoint
 * is keyed by its name, so the new flow starts at the root, reads its source from the start and
 * appends it to a table that already holds what the old flows wrote — every row twice. As on
 * Databricks the edit is not refused, but Ebb says so (edit-warnings.ts): a `warning` event in the
 * pipeline's event log and in the edit's answer, naming the table, the flows and the way out.
 */

export interface ReplacedFlows {
  readonly dataset: string;
  readonly removed_flows: readonly string[];
  readonly new_flows: readonly string[];
  readonly message: string;
}

/** The streaming tables, in both definitions, that lose flows and gain others (pure). */
export function replacedFlows(before: PipelineDefinition, after: PipelineDefinition): ReplacedFlows[] {
  const flowsBefore = streamingTableFlows(before);
  return [...streamingTableFlows(after)].flatMap(([dataset, now]) => {
    const was = flowsBefore.get(dataset);
    if (!was) return [];
    const removed = [...was].filter((flow) => !now.has(flow));
    const added = [...now].filter((flow) => !was.has(flow));
    if (removed.length === 0 || added.length === 0) return [];
    return [{ dataset, removed_flows: removed, new_flows: added, message: warning(dataset, removed, added) }];
  });
}

function streamingTableFlows(definition: PipelineDefinition): Map<string, Set<string>> {
  return new Map(
    definition.datasets.flatMap((dataset) =>
      dataset.type === "streaming_table" ? [[dataset.name, new Set(dataset.flows.map((f) => f.name))]] : [],
    ),
  );
}

function warning(dataset: string, removed: readonly string[], added: readonly string[]): string {
  const flows = (names: readonly string[]) => `${names.length === 1 ? "flow" : "flows"} ${names.join(", ")}`;
  const reads = added.length === 1 ? "the new flow reads its source" : "the new flows read their sources";
  return (
    `Table ${dataset} holds data and its ${flows(removed)} ${removed.length === 1 ? "is" : "are"} replaced by ${flows(added)}: ` +
    `${reads} from the start and ${added.length === 1 ? "appends" : "append"} to ${dataset}, so its rows may be written twice. ` +
    `Run a full refresh of ${dataset} (full_refresh_selection: ["${dataset}"]), or keep the flow's name`
  );
}

/**
 * Of `replaced`, the tables that hold data: one of the removed flows has committed (its HEAD is past
 * the root; a full refresh puts it back there) and the table has rows. HEAD is read first, as it is
 * one item; the table's log only when a removed flow wrote.
 */
export async function replacedOverData(
  env: Pick<RewindEnvironment, "pipelineId" | "checkpoints" | "tableStore">,
  replaced: readonly ReplacedFlows[],
): Promise<ReplacedFlows[]> {
  const written = await Promise.all(
    replaced.map(async (r) => {
      const heads = await Promise.all(
        r.removed_flows.map((flow) => env.checkpoints.head(flowRef(env, flow))),
      );
      return heads.some((head) => head.seq !== ROOT_SEQ) && (await hasRows(env, r.dataset));
    }),
  );
  return replaced.filter((_, i) => written[i]);
}

async function hasRows(env: Pick<RewindEnvironment, "tableStore">, dataset: string): Promise<boolean> {
  try {
    const snapshot = await loadSnapshot(env.tableStore(dataset));
    // A file without statistics is counted as holding rows: a warning too many beats one missed.
    return [...snapshot.files.values()].some((file) => (statsRecordCount(file.stats) ?? 1) > 0);
  } catch (error) {
    if (error instanceof TableNotFoundError) return false;
    throw error;
  }
}
