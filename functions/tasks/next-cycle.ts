import { nextCycle, type CycleInput } from "../../shared/control/updates/steps/continuous-step.ts";
import { taskHandler } from "./task-handler.ts";

/** State `NextCycle` (continuous pipelines): count the cycle, go on here or in a new execution. */
export const handler = taskHandler((plane, input: CycleInput) => nextCycle(plane, input));
