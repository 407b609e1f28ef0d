import type { FlowDefinition } from "../../pipeline/definition-schema.ts";
import type { Checkpoint, FlowRef } from "../../store/checkpoints-repository.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { openStateVersion, type StateVersion } from "../../state/index.ts";

/**
 * Which definition of a flow built its operator state. A change the state is compatible with (a
 * filter added to the query, another expression) is allowed, as in Spark, but a continued open
 * window, dedup or join state then mixes rows taken under the old definition with rows taken under
 * the new: the rewind, its dry run, `validate_only` and the replay say so, with the way out.
 * Every stateful batch records the definition it ran under (`DEFINITION_META`).
 */

export const DEFINITION_META = "definition";

/** The parts of a flow that decide which rows enter its state: its query (whitespace aside) and join. */
export function definitionSignature(flow: FlowDefinition): string {
  return JSON.stringify({ sql: flow.sql.replace(/\s+/g, " ").trim(), join: flow.join ?? null });
}

/** A continued state built under another definition of the flow. */
export interface StateDefinitionDrift {
  readonly flow: string;
  /** The checkpoint whose state was built under the other definition. */
  readonly checkpointSeq: number;
  /** The operators whose state is continued: open windows, dedup keys seen, join rows. */
  readonly state: readonly string[];
  readonly message: string;
}

/** The drift of `version` (the state `checkpoint` names) against `flow`, if any. */
export function driftOf(version: StateVersion, flow: FlowDefinition, checkpointSeq: number) {
  const stored = version.meta[DEFINITION_META];
  if (typeof stored !== "string" || stored === definitionSignature(flow)) return undefined;
  const state = [
    ...(version.meta["window"] !== undefined ? ["open windows"] : []),
    ...(flow.drop_duplicates ? ["dedup keys"] : []),
    ...(flow.join ? ["join rows"] : []),
  ];
  const kept = state.length > 0 ? state.join(" and ") : "operator state";
  return {
    flow: flow.name,
    checkpointSeq,
    state,
    message: `flow ${flow.name} continues the ${kept} of its checkpoint ${checkpointSeq}, built under another definition of its query: rows taken before it keep the old definition (filter, expressions) and rows after it get the new one; for one definition throughout, rewind to before those windows opened, or fully refresh the flow's dataset`,
  } satisfies StateDefinitionDrift;
}

/** `driftOf` the state a stateful flow's checkpoint names (none when it names none). */
export async function stateDefinitionDrift(
  store: ObjectStore,
  ref: FlowRef,
  flow: FlowDefinition,
  checkpoint: Checkpoint | undefined,
): Promise<StateDefinitionDrift | undefined> {
  if (!checkpoint?.stateVersion) return undefined;
  const version = await openStateVersion({ store, flow: ref, version: checkpoint.stateVersion });
  return driftOf(version, flow, checkpoint.seq);
}
