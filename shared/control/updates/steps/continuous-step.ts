import { parseInterval } from "../../../pipeline/duration.ts";
import type { ValidatedPipeline } from "../../../pipeline/validate-pipeline.ts";
import { isTerminal } from "../../../store/updates-repository.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import { continueInNewExecution } from "./execution-handover.ts";
import type { UpdateIds } from "./update-context.ts";

/**
 * Continuous pipelines: a `continuous: true` pipeline's update does not finish after its
 * run. It waits for the trigger interval and runs its DAG levels again, until it is stopped. An
 * execution runs `CYCLES_PER_EXECUTION` cycles, or until its hand-over time (execution-handover.ts),
 * then hands the update over to a fresh execution of the same state machine (named
 * `<updateId>-<cycle>`, counting on), so no execution's history grows past Step Functions' limit
 * nor runs past its timeout; the update records the new execution, which is the one a stop stops.
 */

/** Set in the pipeline configuration, e.g. `"interval 30 seconds"`. */
export const TRIGGER_INTERVAL_KEY = "pipelines.trigger.interval";
export const DEFAULT_TRIGGER_INTERVAL_MS = 5_000;
/** About 15 history events a cycle of a small pipeline: far below the 25,000-event limit. */
export const CYCLES_PER_EXECUTION = 200;

export function triggerSeconds(pipeline: ValidatedPipeline): number {
  const text = pipeline.definition.configuration[TRIGGER_INTERVAL_KEY];
  const ms = text === undefined ? undefined : parseInterval(text);
  return Math.max(1, Math.round((ms ?? DEFAULT_TRIGGER_INTERVAL_MS) / 1000));
}

export interface CycleInput extends UpdateIds {
  readonly cycle?: { readonly number: number };
  /** The execution's plan (the machine's state carries it): its hand-over time. */
  readonly plan?: { readonly handOverAt?: number };
}

export interface Cycle {
  readonly number: number;
  /** This execution has run its share of cycles: hand the update to a new one. */
  readonly continueAsNew: boolean;
  /** The update was stopped meanwhile: end here. */
  readonly stopped: boolean;
}

/** The variable that lowers `CYCLES_PER_EXECUTION` (tests hand over after a few cycles). */
export const CYCLES_PER_EXECUTION_VARIABLE = "EBB_CYCLES_PER_EXECUTION";

/** Between two runs of a continuous update: counts the cycle and says whether to go on here. */
export async function nextCycle(
  plane: ControlPlane,
  input: CycleInput,
  cyclesPerExecution = CYCLES_PER_EXECUTION,
): Promise<Cycle> {
  const update = await plane.updates.get(input.pipelineId, input.updateId);
  const number = (input.cycle?.number ?? 0) + 1;
  return {
    number,
    continueAsNew: number % cyclesPerExecution === 0 || plane.clock() >= (input.plan?.handOverAt ?? Infinity),
    stopped: update === undefined || isTerminal(update.state),
  };
}

/** Starts the next execution of a continuous update and records it as the update's execution. */
export async function continueAsNew(
  plane: ControlPlane,
  input: UpdateIds & { readonly cycle: number; readonly stateMachineArn: string },
): Promise<{ executionArn: string }> {
  const ids = { pipelineId: input.pipelineId, updateId: input.updateId };
  return continueInNewExecution(
    plane,
    ids,
    { name: `${input.updateId}-${input.cycle}`, stateMachineArn: input.stateMachineArn, cycle: input.cycle },
    `cycle ${input.cycle}`,
  );
}
