import {
  handoverAfterMs,
  HANDOVER_AFTER_VARIABLE,
} from "../../shared/control/updates/steps/execution-handover.ts";
import { planExecution } from "../../shared/control/updates/steps/plan-step.ts";
import type { UpdateIds } from "../../shared/control/updates/steps/update-context.ts";
import { taskHandler } from "./task-handler.ts";

/** State `PlanUpdate`: which branch, and the waves or levels to map over. */
export const handler = taskHandler((plane, ids: UpdateIds) =>
  planExecution(plane, ids, handoverAfterMs(process.env[HANDOVER_AFTER_VARIABLE])),
);
