import { CodedError } from "../../../errors/coded-error.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import { startUpdate } from "../start-update.ts";
import { recorder } from "../update-events.ts";
import { intentOf, type OrderedRunStep } from "../update-intent.ts";

/**
 * The hand-on of an ordered run of several pipelines (control/runs/ordered-run.ts): each run's
 * FinishUpdate starts the next pipeline's run, so no function waits on another pipeline; a run that
 * fails, or a next pipeline that cannot start, ends the ordered run with a warning naming the
 * pipelines not run.
 */

/**
 * After run `step` of an ordered run completed: the next pipeline's run starts. A retried
 * FinishUpdate starts it once (the next pipeline's newest updates are looked at first). A next
 * pipeline that cannot start ends the ordered run, said as a warning in the finished run's log.
 */
export async function continueOrderedRun(
  plane: ControlPlane,
  finished: { readonly pipelineId: string; readonly updateId: string },
  step: OrderedRunStep,
): Promise<void> {
  const [next, ...rest] = step.next;
  if (next === undefined || (await startedBy(plane, next, step.requestId))) return;
  const following = { ...step, position: step.position + 1, next: rest };
  try {
    await startUpdate(plane, next, runOfOrderedRun(following), { orderedRun: following });
  } catch (error) {
    if (!(error instanceof CodedError)) throw error;
    await orderedRunEnded(
      plane,
      finished,
      step,
      `pipeline ${next} could not start (${error.errorCode}: ${error.message})`,
    );
  }
}

/** A run of an ordered run failed or could not hand on: the pipelines after it do not run. */
export async function orderedRunEnded(
  plane: ControlPlane,
  at: { readonly pipelineId: string; readonly updateId: string },
  step: OrderedRunStep,
  why: string,
): Promise<void> {
  if (step.next.length === 0) return;
  const name = (await plane.pipelines.get(at.pipelineId))?.name ?? at.pipelineId;
  const events = recorder(plane, at, name);
  await events.warning(
    `Ordered run ${step.requestId} ends at run ${step.position} of ${step.of}: ${why}. Not run: ${step.next.join(", ")}; start them with POST /api/2.0/ebb/runs once the cause is fixed`,
    { ordered_run: { request_id: step.requestId, position: step.position, of: step.of, not_run: step.next } },
  );
  await events.flush();
}

/** The start request of each run of an ordered run. */
export function runOfOrderedRun(step: OrderedRunStep) {
  return { cause: "USER_ACTION" as const, validate_only: false, full_refresh: step.fullRefresh };
}

/** Whether `pipelineId`'s newest updates include one the ordered run started. */
async function startedBy(plane: ControlPlane, pipelineId: string, requestId: string): Promise<boolean> {
  const { items } = await plane.updates.list(pipelineId, { limit: 5 });
  return items.some((update) => {
    const intent = intentOf(update);
    return intent.kind === "run" && intent.orderedRun?.requestId === requestId;
  });
}
