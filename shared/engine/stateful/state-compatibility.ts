import type { FlowDefinition } from "../../pipeline/definition-schema.ts";
import type { PipelinePlans } from "../../pipeline/plan/index.ts";
import type { Checkpoint, CheckpointsRepository, FlowRef } from "../../store/checkpoints-repository.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { isStatefulFlow, openFlowState } from "./stateful-batch.ts";
import { checkJoinState } from "./stream-join.ts";
import { checkWindowState } from "./window-aggregation.ts";

/**
 * The up-front state compatibility check (semantics.md "Replay"): a flow that will continue from a
 * checkpoint's operator state must have the operators that wrote it (dedup keys, watermark column,
 * window, grouping keys and aggregates, a join's type, time range and ON condition). Run at start and validate_only (from HEAD) and at rewind and
 * dry run (from the checkpoint the rewind restores), so a refused definition is refused before
 * anything changes, with `INCOMPATIBLE_STATE` and the way out. A flow that no longer keeps state
 * ignores the old one.
 */
export async function checkStateOf(
  store: ObjectStore,
  flow: FlowRef,
  definition: FlowDefinition,
  checkpoint: Checkpoint | undefined,
  signatures: StateSignatures,
): Promise<void> {
  if (!isStatefulFlow(definition) || !checkpoint?.stateVersion) return;
  const version = await openFlowState(store, flow, definition, checkpoint.stateVersion);
  const plan = signatures.plans.flows.get(definition.name);
  if (plan?.kind === "windowed") checkWindowState(version, definition.name, plan.stateSignature);
  if (plan?.kind === "join") checkJoinState(version, definition.name, plan.stateSignature);
}

/** Where the state signatures are: each flow's plan (a ValidatedPipeline has them). */
export interface StateSignatures {
  readonly plans: PipelinePlans;
}

/** The check from each flow's HEAD. */
export async function checkHeadStates(
  store: ObjectStore,
  checkpoints: CheckpointsRepository,
  pipelineId: string,
  flows: readonly FlowDefinition[],
  signatures: StateSignatures,
): Promise<void> {
  for (const definition of flows) {
    if (!isStatefulFlow(definition)) continue;
    const ref = { pipelineId, flowId: definition.name };
    const head = (await checkpoints.head(ref)).checkpoint;
    await checkStateOf(store, ref, definition, head, signatures);
  }
}
