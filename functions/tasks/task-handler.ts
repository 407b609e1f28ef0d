import middy from "@middy/core";
import type { Context } from "aws-lambda";
import type { ControlPlane } from "../../shared/control/plane/control-plane.ts";
import { codedTaskError } from "../../shared/control/updates/steps/task-errors.ts";
import { controlPlane } from "../runtime/control-plane-from-env.ts";

/**
 * A state-machine task as a Lambda handler: the step called with the process's control plane. A
 * failure keeps its error `name` (Retry and Catch match on it) and carries its `error_code` in front
 * of the message, since Lambda passes on only name and message.
 */
export function taskHandler<Input, Output>(
  step: (plane: ControlPlane, input: Input, context: Context) => Promise<Output>,
  plane: () => ControlPlane = controlPlane,
): middy.MiddyfiedHandler<Input, Output> {
  return middy<Input, Output>().handler(async (input, context) => {
    try {
      return await step(plane(), input, context);
    } catch (error) {
      throw error instanceof Error ? codedTaskError(error) : error;
    }
  });
}
