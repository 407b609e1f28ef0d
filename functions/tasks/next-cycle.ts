import {
  CYCLES_PER_EXECUTION,
  CYCLES_PER_EXECUTION_VARIABLE,
  nextCycle,
  type CycleInput,
} from "../../shared/control/updates/steps/continuous-step.ts";
import { taskHandler } from "./task-handler.ts";

/** State `NextCycle` (continuous pipelines): count the cycle, go on here or in a new execution. */
export const handler = taskHandler((plane, input: CycleInput) =>
  nextCycle(plane, input, cyclesPerExecution(process.env[CYCLES_PER_EXECUTION_VARIABLE])),
);

/** The variable's whole number of cycles, at least 1; the default when unset or not one. */
function cyclesPerExecution(text: string | undefined): number {
  const cycles = Number(text);
  return Number.isInteger(cycles) && cycles >= 1 ? cycles : CYCLES_PER_EXECUTION;
}
