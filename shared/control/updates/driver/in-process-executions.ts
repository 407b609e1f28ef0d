import type { ControlPlane } from "../../plane/control-plane.ts";
import { driveUpdate, type DrivenUpdate, type DriverOptions } from "./update-driver.ts";
import type {
  ContinuedExecution,
  ExecutionStatus,
  UpdateExecutionInput,
  UpdateExecutions,
} from "../../plane/update-executions.ts";

/**
 * The update-executions port in process: each start runs the driver over the same control plane (not
 * awaited, as StartExecution returns at once), named like a Step Functions execution, so a second
 * start of one name finds the first. Tests and benchmarks start updates through `startUpdate` with it
 * and wait for the execution with `settled`.
 */
export class InProcessExecutions implements UpdateExecutions {
  private readonly running = new Map<
    string,
    { stopped: boolean; ended: boolean; done: Promise<DrivenUpdate> }
  >();

  constructor(
    private readonly plane: () => ControlPlane,
    private readonly options: Omit<DriverOptions, "stopped"> = {},
  ) {}

  arnOf(input: UpdateExecutionInput): string {
    return arnNamed(input.updateId);
  }

  start(input: UpdateExecutionInput, continued?: ContinuedExecution): Promise<string> {
    const arn = arnNamed(continued?.name ?? input.updateId);
    if (!this.running.has(arn)) {
      const execution = {
        stopped: false,
        ended: false,
        done: Promise.resolve() as unknown as Promise<DrivenUpdate>,
      };
      const ids = { pipelineId: input.pipelineId, updateId: input.updateId };
      execution.done = driveUpdate(this.plane(), ids, {
        ...this.options,
        ...(input.cycle ? { cycle: input.cycle } : {}),
        stopped: () => execution.stopped,
      }).finally(() => (execution.ended = true));
      this.running.set(arn, execution);
    }
    return Promise.resolve(arn);
  }

  stop(executionArn: string): Promise<void> {
    const execution = this.running.get(executionArn);
    if (execution) execution.stopped = true;
    return Promise.resolve();
  }

  status(executionArn: string): Promise<ExecutionStatus> {
    const execution = this.running.get(executionArn);
    if (!execution) return Promise.resolve("absent");
    return Promise.resolve(execution.ended || execution.stopped ? "ended" : "running");
  }

  /** The execution of an update (its first one), once it has ended. */
  settled(updateId: string): Promise<DrivenUpdate> {
    const execution = this.running.get(arnNamed(updateId));
    if (!execution) return Promise.reject(new Error(`no execution was started for update ${updateId}`));
    return execution.done;
  }
}

/** An in-process execution's ARN, named like a Step Functions execution. */
function arnNamed(name: string): string {
  return `in-process:execution:${name}`;
}
