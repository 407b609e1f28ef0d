import { resetDatasets } from "../../shared/control/updates/steps/reset-step.ts";
import type { UpdateIds } from "../../shared/control/updates/steps/update-context.ts";
import { taskHandler } from "./task-handler.ts";

/** State `ResetDatasets`: full refresh / reset / checkpoint-reset work before the run. */
export const handler = taskHandler((plane, ids: UpdateIds) => resetDatasets(plane, ids));
