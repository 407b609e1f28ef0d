import type { FlowDefinition } from "../../pipeline/definition-schema.ts";
import type { Checkpoint, CheckpointsRepository, FlowRef } from "../../store/checkpoints-repository.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { isStatefulFlow, openFlowState } from "./stateful-batch.ts";
import { checkWindowState } from "./window-aggregation.ts";

/**
 * The up-front state compatibility check (semantics.md "Replay"): a flow that will continue from a
 * checkpoint's operator state must have the operators that wrote it (dedup keys, watermark column,
 * window, grouping keys and aggregates). Run at start and validate_only (from HEAD) and at rewind and
 * dry run (from the checkpoint the rewind restores), so a refused definition is refused before
 * anything changes, with `INCOMPATIBLE_STATE` and the way out. A flow that no longer keeps state
 * ignores the old one.
 */
export async function checkStateOf(
  store: ObjectStore,
  flow: FlowRef,
  definition: FlowDefinition,
  checkpoint: Checkpoint | undefined,
  /** The flow's `windowSignature` when it aggregates windows (ValidatedPipeline.windowSignatures). */
  windowSignature?: string,
): Promise<void> {
  if (!isStatefulFlow(definition) || !checkpoint?.stateVersion) return;
  const version = await openFlowState(store, flow, definition, checkpoint.stateVersion);
  if (windowSignature !== undefined) checkWindowState(version, definition.name, windowSignature);
}

/** The check from each flow's HEAD. */
export async function checkHeadStates(
  store: ObjectStore,
  checkpoints: CheckpointsRepository,
  pipelineId: string,
  flows: readonly FlowDefinition[],
  windowSignatures: ReadonlyMap<string, string>,
): Promise<void> {
  for (const definition of flows) {
    if (!isStatefulFlow(definition)) continue;
    const ref = { pipelineId, flowId: definition.name };
    const head = (await checkpoints.head(ref)).checkpoint;
    await checkStateOf(store, ref, definition, head, windowSignatures.get(definition.name));
  }
}
