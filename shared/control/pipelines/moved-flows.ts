import type { PipelineDefinition } from "../../pipeline/definition-schema.ts";
import { ROOT_SEQ } from "../../store/checkpoints-repository.ts";
import { flowRef, type RewindEnvironment } from "../../rewind/rewind-environment.ts";

/**
 * An edit that moves a flow, under its name, to write another streaming table: a flow's checkpoint is
 * keyed by the pipeline and the flow's name only (checkpoints-repository.ts `FlowRef`), so the flow
 * keeps its source offsets and operator state and continues where it stopped — and the new table
 * never gets the records the flow read while it wrote the old one. On Databricks (and in Spark's
 * declarative pipelines) a flow's checkpoint lives under its target table, so the moved flow would
 * start afresh there; Ebb keeps the checkpoint, which a user does not expect, so the edit says so, as
 * for replaced flows (replaced-flows.ts): a `warning` event and an entry in the edit's answer naming
 * the flow, both tables and the ways out.
 */

export interface MovedFlow {
  readonly flow: string;
  /** The streaming table the flow wrote before the edit. */
  readonly from_dataset: string;
  /** The streaming table it writes now. */
  readonly to_dataset: string;
  readonly message: string;
}

/** Flows that write a streaming table in both definitions, a different one in each (pure). */
export function movedFlows(before: PipelineDefinition, after: PipelineDefinition): MovedFlow[] {
  const targetBefore = flowTargets(before);
  return [...flowTargets(after)].flatMap(([flow, to]) => {
    const from = targetBefore.get(flow);
    if (from === undefined || from === to) return [];
    return [{ flow, from_dataset: from, to_dataset: to, message: warning(flow, from, to) }];
  });
}

/** Flow name → the streaming table it writes (flow names are unique in a pipeline). */
function flowTargets(definition: PipelineDefinition): Map<string, string> {
  return new Map(
    definition.datasets.flatMap((dataset) =>
      dataset.type === "streaming_table" ? dataset.flows.map((f) => [f.name, dataset.name] as const) : [],
    ),
  );
}

function warning(flow: string, from: string, to: string): string {
  return (
    `Flow ${flow} now writes ${to} instead of ${from} and keeps its checkpoint (it is keyed by the flow's name): ` +
    `it continues from where it stopped, so ${to} will not get the records ${flow} read while it wrote ${from}. ` +
    `To read its source from the start into ${to}, run a full refresh of ${to} (full_refresh_selection: ["${to}"]), ` +
    `or reset the flow's checkpoint and keep ${to}'s rows (reset_checkpoint_selection: ["${flow}"])`
  );
}

/**
 * Of `moved`, the flows that have read something: their HEAD is past the root (a flow at the root
 * reads its source from the start wherever it writes, so nothing is missed).
 */
export async function movedWithProgress(
  env: Pick<RewindEnvironment, "pipelineId" | "checkpoints">,
  moved: readonly MovedFlow[],
): Promise<MovedFlow[]> {
  const heads = await Promise.all(moved.map((m) => env.checkpoints.head(flowRef(env, m.flow))));
  return moved.filter((_, i) => heads[i]!.seq !== ROOT_SEQ);
}
