import { continueAsNew } from "../../shared/control/updates/steps/continuous-step.ts";
import type { UpdateIds } from "../../shared/control/updates/steps/update-context.ts";
import { taskHandler } from "./task-handler.ts";

/** State `ContinueUpdate`: a continuous update's next execution (the state machine's ARN comes from the context object). */
export const handler = taskHandler(
  (plane, input: UpdateIds & { readonly cycle: number; readonly stateMachineArn: string }) =>
    continueAsNew(plane, input),
);
