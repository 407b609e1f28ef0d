import type { DatasetItem } from "../../shared/control/updates/steps/plan-step.ts";
import { rewindOneDataset } from "../../shared/control/updates/steps/rewind-step.ts";
import { taskHandler } from "./task-handler.ts";

/** State `RewindDataset` (inside the wave Map): one dataset's RESTORE and HEAD moves. */
export const handler = taskHandler((plane, item: DatasetItem) => rewindOneDataset(plane, item));
