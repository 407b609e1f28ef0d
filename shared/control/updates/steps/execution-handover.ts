import type { ControlPlane } from "../../plane/control-plane.ts";
import { openUpdate, type UpdateIds } from "./update-context.ts";

/**
 * An execution's hand-over time. A Step Functions execution may run 24 hours (the state machine's
 * timeout); an update that needs longer — a replay of days of data, a backfill, a continuous update
 * with a long trigger interval — continues in a new execution instead of being cut off and found
 * lost. PlanUpdate sets the time (`handOverAt`: its own time plus `HANDOVER_AFTER_MS`), every
 * RunFlow's budget ends there, and a flow stopped there with batches left records it on the update
 * (`UpdatesRepository.requestHandover`); FinishUpdate, finding it recorded, starts the next
 * execution instead of finishing (and NextCycle does the same for a continuous update), which
 * continues the update where its flows' checkpoints stand.
 */

/** 23 hours: an hour before the state machine's 24-hour timeout, for the RunFlows in flight to end. */
export const HANDOVER_AFTER_MS = 23 * 60 * 60 * 1000;

/** The variable that sets `HANDOVER_AFTER_MS` in seconds (tests hand over after a few). */
export const HANDOVER_AFTER_VARIABLE = "EBB_EXECUTION_HANDOVER_SECONDS";

/** The variable's whole, positive number of seconds in milliseconds; the default otherwise. */
export function handoverAfterMs(text: string | undefined): number {
  const seconds = Number(text);
  return Number.isInteger(seconds) && seconds > 0 ? seconds * 1000 : HANDOVER_AFTER_MS;
}

/** The next execution's name: unique per hand-over, the same when a retried step asks again. */
export function handoverExecutionName(updateId: string, handOverAt: number): string {
  return `${updateId}-h${handOverAt}`;
}

/**
 * Starts the update's next execution (a retried step starts none twice: executions are named) and
 * records it as the update's, with an event saying why.
 */
export async function continueInNewExecution(
  plane: ControlPlane,
  ids: UpdateIds,
  next: { readonly name: string; readonly stateMachineArn?: string; readonly cycle?: number },
  why: string,
): Promise<{ executionArn: string }> {
  const context = await openUpdate(plane, ids);
  const executionArn = await plane.executions.start(
    { ...ids, ...(next.cycle !== undefined ? { cycle: { number: next.cycle } } : {}) },
    { name: next.name, ...(next.stateMachineArn ? { stateMachineArn: next.stateMachineArn } : {}) },
  );
  await plane.updates.recordExecution(ids.pipelineId, ids.updateId, executionArn);
  await context.events.executionHandedOver(next.name, why);
  await context.events.flush();
  return { executionArn };
}
