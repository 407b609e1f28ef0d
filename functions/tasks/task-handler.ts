import middy from "@middy/core";
import type { Context } from "aws-lambda";
import type { ControlPlane } from "../../shared/control/plane/control-plane.ts";
import { codedTaskError } from "../../shared/control/updates/steps/task-errors.ts";
import { planeOfUpdate } from "../../shared/control/branches/branch-plane.ts";
import { controlPlane } from "../runtime/control-plane-from-env.ts";
import { logger } from "../runtime/ebb-logger.ts";
import { traceHandler } from "../runtime/ebb-tracer.ts";

/**
 * A state-machine task as a Lambda handler: the step called with the process's control plane (an
 * update on a branch: its branch's, branch-plane.ts). A
 * failure keeps its error `name` (Retry and Catch match on it) and carries its `error_code` in front
 * of the message, since Lambda passes on only name and message. Each run is one JSON log line: the
 * task, pipeline, update and flow, status, duration and error code.
 */
export function taskHandler<Input, Output>(
  step: (plane: ControlPlane, input: Input, context: Context) => Promise<Output>,
  plane: () => ControlPlane = controlPlane,
): middy.MiddyfiedHandler<Input, Output> {
  return middy<Input, Output>()
    .use(traceHandler())
    .handler(async (input, context) => {
      const started = Date.now();
      const ids = taskIds(input);
      const line = (status: string, errorCode?: string) =>
        logger.info("task", {
          request_id: context.awsRequestId,
          task: context.functionName,
          ...ids,
          status,
          duration_ms: Date.now() - started,
          error_code: errorCode,
        });
      try {
        const output = await step(await stepPlane(plane(), input), input, context);
        line("SUCCEEDED");
        return output;
      } catch (error) {
        const failure = error instanceof Error ? codedTaskError(error) : error;
        line("FAILED", errorCodeOf(error));
        throw failure;
      }
    });
}

/** The plane the step runs with: an update on a branch runs with its branch's (branch-plane.ts). */
async function stepPlane(plane: ControlPlane, input: unknown): Promise<ControlPlane> {
  const { pipeline_id: pipelineId, update_id: updateId } = taskIds(input);
  return pipelineId !== undefined && updateId !== undefined
    ? planeOfUpdate(plane, { pipelineId, updateId })
    : plane;
}

/** The ids a task's input carries (`UpdateIds`, a run item's dataset and flow): nothing else of it. */
function taskIds(input: unknown): Record<string, string | undefined> {
  const record = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  return {
    pipeline_id: text(record["pipelineId"]),
    update_id: text(record["updateId"]),
    dataset: text(record["dataset"]),
    flow: text(record["flow"]),
  };
}

function errorCodeOf(error: unknown): string {
  const code = (error as { errorCode?: unknown } | null)?.errorCode;
  return typeof code === "string" ? code : "INTERNAL_ERROR";
}
