import type { Page, PageRequest } from "./query-pages.ts";
import type { StoreWrite } from "./store-writes.ts";

/**
 * The Updates repository port (architecture.md "Storage"): one record per update of a pipeline, under
 * a time-ordered id so a pipeline's updates list newest first. States follow Databricks' `UpdateInfo`
 * (api.md); the terminal ones are final: a transition out of them is refused as a result.
 */

import { UPDATE_STATES } from "./record-states.ts";

export { UPDATE_STATES };
export type UpdateState = (typeof UPDATE_STATES)[number];

export const TERMINAL_UPDATE_STATES = [
  "COMPLETED",
  "FAILED",
  "CANCELED",
] as const satisfies readonly UpdateState[];
export type TerminalUpdateState = (typeof TERMINAL_UPDATE_STATES)[number];

export function isTerminal(state: UpdateState): state is TerminalUpdateState {
  return (TERMINAL_UPDATE_STATES as readonly UpdateState[]).includes(state);
}

export const UPDATE_CAUSES = [
  "USER_ACTION",
  "API_CALL",
  "JOB_TASK",
  "RETRY_ON_FAILURE",
  "SCHEMA_CHANGE",
  "SERVICE_UPGRADE",
  "INFRASTRUCTURE_MAINTENANCE",
] as const;
export type UpdateCause = (typeof UPDATE_CAUSES)[number];

/** Why an update failed, as the API reports it. */
export interface UpdateError {
  readonly errorCode?: string;
  readonly message: string;
}

export interface UpdateRecord {
  readonly pipelineId: string;
  /** Time-ordered: sorts by creation time. */
  readonly updateId: string;
  readonly state: UpdateState;
  readonly cause: UpdateCause;
  /** The definition version this update runs (semantics.md: every update records it). */
  readonly definitionVersion: number;
  /** The start request as validated (refresh, selections, rewind_spec, …), as the API echoes it. */
  readonly request: Readonly<Record<string, unknown>>;
  /** What the update does, parsed once from the request (the control plane's `update-intent.ts`). */
  readonly intent: Readonly<Record<string, unknown>>;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly lastModified: number;
  /** When it reached a terminal state. */
  readonly endedAt?: number;
  readonly error?: UpdateError;
  /** The Step Functions execution running it. */
  readonly executionArn?: string;
  /**
   * The hand-over time of the execution one of whose flows stopped there with batches left (the
   * execution's plan says it): the execution continues the update in a new one instead of finishing.
   */
  readonly handoverAt?: number;
}

export interface NewUpdate {
  readonly pipelineId: string;
  readonly cause: UpdateCause;
  readonly definitionVersion: number;
  readonly request: Readonly<Record<string, unknown>>;
  readonly intent: Readonly<Record<string, unknown>>;
  /** @default "CREATED" */
  readonly state?: UpdateState;
  /**
   * The ARN of the execution that will run the update, from the id the record gets (executions are
   * named after it), written with the record instead of after the execution starts.
   */
  readonly executionArnOf?: (updateId: string) => string;
}

export type TransitionResult =
  | { readonly outcome: "transitioned"; readonly update: UpdateRecord }
  /** The update had already ended; nothing was changed. */
  | { readonly outcome: "already-final"; readonly update: UpdateRecord };

export interface TransitionDetails {
  /** Recorded with FAILED (or CANCELED). */
  readonly error?: UpdateError;
}

export interface UpdatesRepository {
  /** Records a new update with a fresh time-ordered id. */
  create(update: NewUpdate): Promise<UpdateRecord>;
  /** The update, or undefined. */
  get(pipelineId: string, updateId: string): Promise<UpdateRecord | undefined>;
  /** The pipeline's updates, newest first. Throws `InvalidPageTokenError` for a foreign token. */
  list(pipelineId: string, page: PageRequest): Promise<Page<UpdateRecord>>;
  /**
   * Moves the update to `state` unless it has ended. Throws `UpdateNotFoundError` when absent. Moving
   * to the state it is in is allowed (a retried task).
   */
  transition(
    pipelineId: string,
    updateId: string,
    state: UpdateState,
    details?: TransitionDetails,
  ): Promise<TransitionResult>;
  /**
   * `transition`, and `writes` (other repositories' writes of the same family, at most
   * `MAX_WRITES_TOGETHER - 1`) made with it, all or none (store-writes.ts). Answers false when nothing
   * was written: the update is absent or has ended, or one of `writes` found its condition not to
   * hold. The caller then makes them one by one, to learn which.
   */
  transitionWith(
    pipelineId: string,
    updateId: string,
    state: UpdateState,
    writes: readonly StoreWrite[],
  ): Promise<boolean>;
  /** Records the execution running the update. Throws `UpdateNotFoundError` when absent. */
  recordExecution(pipelineId: string, updateId: string, executionArn: string): Promise<void>;
  /**
   * Records that a flow stopped at its execution's hand-over time `at` with batches left (see
   * `handoverAt`). Throws `UpdateNotFoundError` when absent.
   */
  requestHandover(pipelineId: string, updateId: string, at: number): Promise<void>;
  /**
   * Removes an update that never began: one still QUEUED (a start that lost the race for the pipeline,
   * so no listing shows it as the latest). Answers false, removing nothing, when it is absent or has
   * moved on.
   */
  discard(pipelineId: string, updateId: string): Promise<boolean>;
}
