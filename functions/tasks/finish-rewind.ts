import { finishRewind } from "../../shared/control/steps/rewind-step.ts";
import type { UpdateIds } from "../../shared/control/steps/update-context.ts";
import { taskHandler } from "./task-handler.ts";

/** State `FinishRewind`: the block cleared and the final rewind_summary. */
export const handler = taskHandler((plane, ids: UpdateIds) => finishRewind(plane, ids));
