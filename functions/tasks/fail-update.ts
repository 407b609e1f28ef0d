import { failUpdate } from "../../shared/control/updates/steps/finish-step.ts";
import type { CaughtError } from "../../shared/control/updates/steps/task-errors.ts";
import type { UpdateIds } from "../../shared/control/updates/steps/update-context.ts";
import { taskHandler } from "./task-handler.ts";

/** The Catch path of every task: FAILED with the caught error, an event, the pipeline released. */
export const handler = taskHandler(
  (
    plane,
    input: UpdateIds & { readonly error: CaughtError; readonly dataset?: string; readonly flow?: string },
  ) => failUpdate(plane, input, input.error, input),
);
