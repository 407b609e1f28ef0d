import { executeRefreshPlan } from "../../../rewind/refresh-execution.ts";
import { planRefresh } from "../../../rewind/refresh-plan.ts";
import { qualifiedName } from "../../../rewind/pipeline-datasets.ts";
import { publishOnce } from "../../plane/lifecycle-events.ts";
import { checkpointReset, fullRefresh } from "../lifecycle-event-builders.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import { intentOf } from "../update-intent.ts";
import { openUpdate, type UpdateIds } from "./update-context.ts";

/**
 * The run branch's resets, before any flow runs (semantics.md "Refresh and reset"): the refresh plan
 * is derived again from the recorded intent (pure) and executed; every reset is idempotent. Then
 * "Full Refresh" and "Checkpoint Reset" tell readers outside, once each (docs/events.md).
 */
export async function resetDatasets(plane: ControlPlane, ids: UpdateIds): Promise<{ resets: number }> {
  const context = await openUpdate(plane, ids);
  const intent = intentOf(context.update);
  if (intent.kind !== "run") throw new TypeError(`update ${ids.updateId} is not a run`);
  await plane.updates.transition(ids.pipelineId, ids.updateId, "RESETTING");
  await context.events.updateProgress("RESETTING");
  const plan = planRefresh(context.pipeline, intent.refresh);
  const done = await executeRefreshPlan(context.env, plan, ids.updateId);
  await context.events.flush();
  const origin = { ...ids, pipelineName: context.pipeline.definition.name, time: plane.clock() };
  if (plan.mode !== "INCREMENTAL" && done.resets.length > 0) {
    const tables = done.resets.map((r) => ({ ...r, table: qualifiedName(context.pipeline, r.dataset) }));
    await publishOnce(plane, fullRefresh(origin, plan.mode, tables));
  }
  if (done.checkpointResets.length > 0)
    await publishOnce(plane, checkpointReset(origin, done.checkpointResets));
  return { resets: plan.resets.length + plan.checkpointResets.length };
}
