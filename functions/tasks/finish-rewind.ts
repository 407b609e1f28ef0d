import { finishRewind } from "../../shared/control/updates/steps/rewind-step.ts";
import type { UpdateIds } from "../../shared/control/updates/steps/update-context.ts";
import { taskHandler } from "./task-handler.ts";

/** State `FinishRewind`: the block cleared and the final rewind_summary. */
export const handler = taskHandler((plane, ids: UpdateIds) => finishRewind(plane, ids));
