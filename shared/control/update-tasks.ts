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
  NextCycle: "next-cycle",
  ContinueUpdate: "continue-update",
  FinishUpdate: "finish-update",
  /** The Catch path of the top level, and of each Map's item processor. */
  FailUpdate: "fail-update",
  FailUpdateInRewind: "fail-update",
  FailUpdateInRun: "fail-update",
} as const;
export type UpdateTask = keyof typeof UPDATE_TASKS;

/** Transient failures: storage unavailable, a lost commit race, Lambda's own hiccups. */
export const RETRYABLE_ERRORS = [
  "StoreUnavailableError",
  "CommitRetriesExhaustedError",
  "Lambda.ServiceException",
  "Lambda.AWSLambdaException",
  "Lambda.SdkClientException",
  "Lambda.TooManyRequestsException",
] as const;

/** Every task's Retry: after 2 s, then 4, 8, 16. */
export const TASK_RETRY = { intervalSeconds: 2, maxAttempts: 4, backoffRate: 2 } as const;

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
