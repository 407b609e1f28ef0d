import { finishUpdate } from "../../shared/control/steps/finish-step.ts";
import type { UpdateIds } from "../../shared/control/steps/update-context.ts";
import { taskHandler } from "./task-handler.ts";

/** State `FinishUpdate`: COMPLETED, the pipeline released, a rewind point captured. */
export const handler = taskHandler((plane, ids: UpdateIds) => finishUpdate(plane, ids));
