import type { SFNClient } from "@aws-sdk/client-sfn";
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  StartExecutionCommand,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import type {
  ContinuedExecution,
  ExecutionStatus,
  UpdateExecutionInput,
  UpdateExecutions,
} from "../../shared/control/plane/update-executions.ts";

/**
 * The update-executions port on Step Functions: StartExecution named after the update id (a retried
 * start finds the same execution instead of running the update twice), StopExecution, and
 * DescribeExecution to tell a running execution from an ended or an absent one.
 */
export class SfnUpdateExecutions implements UpdateExecutions {
  constructor(
    private readonly client: SFNClient,
    private readonly stateMachineArn: () => string,
  ) {}

  arnOf(input: UpdateExecutionInput): string {
    return executionArnOf(this.stateMachineArn(), input.updateId);
  }

  async start(input: UpdateExecutionInput, continued?: ContinuedExecution): Promise<string> {
    const stateMachineArn = continued?.stateMachineArn ?? this.stateMachineArn();
    const name = continued?.name ?? input.updateId;
    try {
      const started = await this.client.send(
        new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }),
      );
      return started.executionArn as string;
    } catch (error) {
      if (error instanceof ExecutionAlreadyExists) return executionArnOf(stateMachineArn, name);
      throw error;
    }
  }

  async stop(executionArn: string, cause: string): Promise<void> {
    try {
      await this.client.send(new StopExecutionCommand({ executionArn, cause }));
    } catch (error) {
      if (!(error instanceof ExecutionDoesNotExist)) throw error;
    }
  }

  async status(executionArn: string): Promise<ExecutionStatus> {
    try {
      const described = await this.client.send(new DescribeExecutionCommand({ executionArn }));
      // PENDING_REDRIVE: a redriven execution about to run again.
      return described.status === "RUNNING" || described.status === "PENDING_REDRIVE" ? "running" : "ended";
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist) return "absent";
      throw error;
    }
  }
}

/** `arn:…:stateMachine:<name>` → `arn:…:execution:<name>:<execution>`. */
export function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(":stateMachine:", ":execution:")}:${name}`;
}
