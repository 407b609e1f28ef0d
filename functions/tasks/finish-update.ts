import { finishUpdate } from "../../shared/control/updates/steps/finish-step.ts";
import type { ExecutionPlan } from "../../shared/control/updates/steps/plan-step.ts";
import type { UpdateIds } from "../../shared/control/updates/steps/update-context.ts";
import { taskHandler } from "./task-handler.ts";

/**
 * State `FinishUpdate`: COMPLETED, the pipeline released, a rewind point captured. Its input is the
 * machine's state: the ids, and the plan PlanUpdate answered (`$.plan`).
 */
export const handler = taskHandler(
  (plane, input: UpdateIds & { readonly plan?: Pick<ExecutionPlan, "finish"> }) =>
    finishUpdate(plane, { pipelineId: input.pipelineId, updateId: input.updateId }, input.plan?.finish),
);
