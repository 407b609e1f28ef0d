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

export interface UpdateExecutions {
  /** Starts the execution named `input.updateId`; answers its ARN. */
  start(input: UpdateExecutionInput): Promise<string>;
  /** Stops a running execution; a finished one is left as it is. */
  stop(executionArn: string, cause: string): Promise<void>;
}
