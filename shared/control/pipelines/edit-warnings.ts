import type { PipelineDefinition } from "../../pipeline/definition-schema.ts";
import type { NewEvent } from "../../store/event-log-repository.ts";
import { DEFAULT_EVENT_RETENTION_MS } from "../../store/event-log-repository.ts";
import type { RewindEnvironment } from "../../rewind/rewind-environment.ts";
import { EVENT_TYPES, pipelineEvent } from "../../rewind/rewind-events.ts";
import { movedFlows, movedWithProgress, type MovedFlow } from "./moved-flows.ts";
import { replacedFlows, replacedOverData, type ReplacedFlows } from "./replaced-flows.ts";

/**
 * What an edit may do to data that it applies anyway, as Databricks does, but says: flows replaced
 * over a table that holds data (replaced-flows.ts) and flows moved to another table with their
 * checkpoint (moved-flows.ts). Each is an entry of the edit's `warnings` and a WARN `warning` event.
 */

export type EditWarning = ReplacedFlows | MovedFlow;

/** The warnings of the edit from `before` to `after`, given the flows' checkpoints and tables now. */
export async function editWarnings(
  env: Pick<RewindEnvironment, "pipelineId" | "checkpoints" | "tableStore">,
  before: PipelineDefinition,
  after: PipelineDefinition,
): Promise<EditWarning[]> {
  const [replaced, moved] = await Promise.all([
    replacedOverData(env, replacedFlows(before, after)),
    movedWithProgress(env, movedFlows(before, after)),
  ]);
  return [...replaced, ...moved];
}

/** Each warning as a WARN `warning` event of the pipeline, in no update (an edit has none). */
export function editWarningEvents(
  env: Pick<RewindEnvironment, "pipelineId" | "pipeline" | "clock">,
  warnings: readonly EditWarning[],
): NewEvent[] {
  const timestamp = env.clock();
  return warnings.map((warning) =>
    pipelineEvent(env, {
      event_type: EVENT_TYPES.warning,
      level: "WARN",
      message: warning.message,
      ...eventSubject(warning),
      timestamp,
      retentionMs: DEFAULT_EVENT_RETENTION_MS,
    }),
  );
}

function eventSubject(warning: EditWarning) {
  if ("flow" in warning) {
    const { flow, from_dataset, to_dataset } = warning;
    return { dataset: to_dataset, details: { flow_moved: { flow, from_dataset, to_dataset } } };
  }
  const { dataset, removed_flows, new_flows } = warning;
  return { dataset, details: { flows_replaced: { dataset, removed_flows, new_flows } } };
}
