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
  /**
   * A continued execution's count of the update's cycles so far: it counts on from there, so each
   * hand-over names a new execution (`<updateId>-<cycle>`), never one that ran before.
   */
  readonly cycle?: { readonly number: number };
}

/**
 * An update's next execution: its own name, on the state machine running the update now (the
 * runtime's own when not given).
 */
export interface ContinuedExecution {
  readonly name: string;
  readonly stateMachineArn?: string;
}

/**
 * Where an execution is: `running`; `ended` (succeeded, failed, stopped or timed out); `absent`: no
 * execution of that ARN (not started yet, or unknown to a runner that restarted since).
 */
export type ExecutionStatus = "running" | "ended" | "absent";

export interface UpdateExecutions {
  /**
   * The ARN that `start(input)` will answer, known before it starts: the update's record carries it
   * from its first write, so starting costs no second write.
   */
  arnOf(input: UpdateExecutionInput): string;
  /** Starts the execution named `input.updateId` (or as `continued` says); answers its ARN. */
  start(input: UpdateExecutionInput, continued?: ContinuedExecution): Promise<string>;
  /** Stops a running execution; a finished one is left as it is. */
  stop(executionArn: string, cause: string): Promise<void>;
  status(executionArn: string): Promise<ExecutionStatus>;
}
