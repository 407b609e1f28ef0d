import { resetDatasets } from "../../shared/control/steps/reset-step.ts";
import type { UpdateIds } from "../../shared/control/steps/update-context.ts";
import { taskHandler } from "./task-handler.ts";

/** State `ResetDatasets`: full refresh / reset / checkpoint-reset work before the run. */
export const handler = taskHandler((plane, ids: UpdateIds) => resetDatasets(plane, ids));
