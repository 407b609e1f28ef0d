/**
 * The tasks of the update state machine, shared by its two walkers so they cannot drift: the ASL
 * (`infra/aws/update-state-machine.ts`) and the in-process driver (`update-driver.ts`). A template
 * test asserts that the ASL's task states and this table are the same.
 */

/** Each task state, and the Lambda entry (`functions/tasks/<entry>.ts`) it invokes. */
export const UPDATE_TASKS = {
  PlanUpdate: "plan-update",
  ResetDatasets: "reset-datasets",
  RewindDataset: "rewind-dataset",
  FinishRewind: "finish-rewind",
  RunFlow: "run-flow",
  /** RunFlow in a continuous update's levels (a machine of their own, so no run pays a Choice). */
  RunFlowInCycle: "run-flow",
  NextCycle: "next-cycle",
  ContinueUpdate: "continue-update",
  FinishUpdate: "finish-update",
  /** The Catch path of the top level, and of each Map's item processor. */
  FailUpdate: "fail-update",
  FailUpdateInRewind: "fail-update",
  FailUpdateInRun: "fail-update",
  FailUpdateInCycle: "fail-update",
} as const;
export type UpdateTask = keyof typeof UPDATE_TASKS;

/**
 * Transient failures: storage unavailable, a source's stream unreachable for a while (a broker
 * restarting), a lost commit race (or a commit that conflicts with a
 * concurrent one: redone against the table as it now is), Lambda's own hiccups.
 */
export const RETRYABLE_ERRORS = [
  "StoreUnavailableError",
  "SourceUnavailableError",
  "CommitRetriesExhaustedError",
  "TableWriteConflictError",
  "CommitConflictError",
  "Lambda.ServiceException",
  "Lambda.AWSLambdaException",
  "Lambda.SdkClientException",
  "Lambda.TooManyRequestsException",
] as const;

/** Every task's Retry: after 2 s, then 4, 8, 16. */
export const TASK_RETRY = { intervalSeconds: 2, maxAttempts: 4, backoffRate: 2 } as const;

/** Whether a task's Retry runs it again after `error` (while its attempts last). */
export function retriedByTask(error: unknown): boolean {
  return error instanceof Error && (RETRYABLE_ERRORS as readonly string[]).includes(error.name);
}

/** `up to 4 times over about 30 s`: how long a task's Retry tries, for messages. */
export function describeTaskRetry(): string {
  const { intervalSeconds, maxAttempts, backoffRate } = TASK_RETRY;
  let seconds = 0;
  for (let attempt = 0; attempt < maxAttempts; attempt++) seconds += intervalSeconds * backoffRate ** attempt;
  return `up to ${maxAttempts} times over about ${seconds} s`;
}

/**
 * RunFlow's second Retry: its budget ran out with batches left (`RunBudgetSpentError`), so the same
 * item is invoked again a second later — the loop until caught up, as a retry (one state transition
 * per invocation, no Choice and Succeed per flow). Step Functions' largest MaxAttempts: the
 * execution's own timeout bounds the loop.
 */
export const RUN_BUDGET_RETRY = {
  error: "RunBudgetSpentError",
  intervalSeconds: 1,
  maxAttempts: 99_999_999,
  backoffRate: 1,
} as const;

/** A task state's Retry list, in order: transient errors, then (RunFlow) a spent budget. */
export function taskRetriers(state: UpdateTask): readonly {
  errors: readonly string[];
  intervalSeconds: number;
  maxAttempts: number;
  backoffRate: number;
}[] {
  const transient = { errors: RETRYABLE_ERRORS, ...TASK_RETRY };
  if (state !== "RunFlow" && state !== "RunFlowInCycle") return [transient];
  const { error, ...budget } = RUN_BUDGET_RETRY;
  return [transient, { errors: [error], ...budget }];
}

/**
 * Every task's `TimeoutSeconds`, and its Lambda's timeout (Lambda's longest, 15 minutes): the two
 * agree, so a task never times out while its function still runs (which would then write behind the
 * state machine's back), and RunFlow's budget (its remaining time less a margin) ends its batches in
 * time. The local runner, whose default is 60 s, gets the same value from the ASL.
 */
export const TASK_TIMEOUT_SECONDS = 900;

/** Datasets of one wave, and flows of one level, run side by side up to this many. */
export const MAX_PARALLEL_ITEMS = 8;

/** The error a Catch hands over: a task's error name and its message (with its code in front). */
export const UPDATE_FAILED = { Error: "UpdateFailed", Cause: "see the update's error" } as const;
