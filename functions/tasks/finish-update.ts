import { finishUpdate } from "../../shared/control/updates/steps/finish-step.ts";
import type { ExecutionPlan } from "../../shared/control/updates/steps/plan-step.ts";
import type { UpdateIds } from "../../shared/control/updates/steps/update-context.ts";
import { ENVIRONMENT } from "../runtime/environment.ts";
import { taskHandler } from "./task-handler.ts";

/**
 * State `FinishUpdate`: COMPLETED, the pipeline released, a rewind point captured — or, past the
 * execution's hand-over time with batches left, the update continued in a new execution. Its input
 * is the machine's state: the ids, and the plan PlanUpdate answered (`$.plan`).
 */
export const handler = taskHandler(
  (
    plane,
    input: UpdateIds & {
      readonly plan?: Pick<ExecutionPlan, "finish" | "handOverAt">;
      readonly stateMachineArn?: string;
    },
  ) => {
    // An ordered run's next pipeline starts an execution of this machine, whose ARN a task learns
    // from the context object (an environment variable naming it would be a dependency cycle).
    if (input.stateMachineArn) process.env[ENVIRONMENT.stateMachineArn] ??= input.stateMachineArn;
    return finishUpdate(
      plane,
      { pipelineId: input.pipelineId, updateId: input.updateId },
      input.plan?.finish,
      input.plan?.handOverAt === undefined
        ? undefined
        : {
            at: input.plan.handOverAt,
            ...(input.stateMachineArn ? { stateMachineArn: input.stateMachineArn } : {}),
          },
    );
  },
);
