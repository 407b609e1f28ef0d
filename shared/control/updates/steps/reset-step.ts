import { executeRefreshPlan } from "../../../rewind/refresh-execution.ts";
import { planRefresh } from "../../../rewind/refresh-plan.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import { intentOf } from "../update-intent.ts";
import { openUpdate, type UpdateIds } from "./update-context.ts";

/**
 * The run branch's resets, before any flow runs (semantics.md "Refresh and reset"): the refresh plan
 * is derived again from the recorded intent (pure) and executed; every reset is idempotent.
 */
export async function resetDatasets(plane: ControlPlane, ids: UpdateIds): Promise<{ resets: number }> {
  const context = await openUpdate(plane, ids);
  const intent = intentOf(context.update);
  if (intent.kind !== "run") throw new TypeError(`update ${ids.updateId} is not a run`);
  await plane.updates.transition(ids.pipelineId, ids.updateId, "RESETTING");
  await context.events.updateProgress("RESETTING");
  const plan = planRefresh(context.pipeline, intent.refresh);
  await executeRefreshPlan(context.env, plan, ids.updateId);
  await context.events.flush();
  return { resets: plan.resets.length + plan.checkpointResets.length };
}
