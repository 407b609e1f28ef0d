/**
 * The port that runs an update's state machine: on AWS Step Functions' StartExecution and
 * StopExecution, locally the same calls against the embedded runner. One execution per update, named
 * after the update id, so a retried start cannot run an update twice (Step Functions refuses a second
 * execution with the same name).
 */

/** What an execution receives: ids only (architecture.md: the truth lives in S3 and DynamoDB). */
export interface UpdateExecutionInput {
  readonly pipelineId: string;
  readonly updateId: string;
}

/** A continuous update's next execution: its own name, on the state machine running the update now. */
export interface ContinuedExecution {
  readonly name: string;
  readonly stateMachineArn: string;
}

export interface UpdateExecutions {
  /** Starts the execution named `input.updateId` (or as `continued` says); answers its ARN. */
  start(input: UpdateExecutionInput, continued?: ContinuedExecution): Promise<string>;
  /** Stops a running execution; a finished one is left as it is. */
  stop(executionArn: string, cause: string): Promise<void>;
  /** Whether the execution still runs (false when it ended, was stopped, or is unknown: e.g. lost in a crash). */
  isRunning(executionArn: string): Promise<boolean>;
}
