import { RewindStoppedError } from "../../../rewind/errors.ts";
import { completeRewind, rewindDataset } from "../../../rewind/rewind-execution.ts";
import { retriedByTask } from "../update-tasks.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import { readRewindPlan } from "../rewind-plan-record.ts";
import type { DatasetItem } from "./plan-step.ts";
import { openUpdate, type UpdateIds } from "./update-context.ts";

/**
 * The rewind branch's steps, working from the plan start-update recorded (rewind-plan-record.ts).
 * `rewindDataset` plans each RESTORE against the table as it is, so a retried step converges.
 */

/** One dataset: its RESTORE and its flows' HEAD moves (rewind_progress event). */
export async function rewindOneDataset(plane: ControlPlane, item: DatasetItem) {
  const context = await openUpdate(plane, item);
  const plan = await readRewindPlan(plane.bucket, item);
  const dataset = plan.datasets.find((d) => d.dataset === item.dataset);
  if (!dataset)
    throw new TypeError(`dataset ${item.dataset} is not in the rewind of update ${item.updateId}`);
  try {
    const done = await rewindDataset(context.env, dataset, item.updateId);
    return { dataset: done.dataset, restoreVersion: done.restoreVersion ?? null };
  } catch (error) {
    // A transient failure is retried as it is; any other names the dataset the rewind stopped at.
    if (retriedByTask(error)) throw error;
    throw new RewindStoppedError(dataset.identifier, error);
  }
}

/** After every wave: the block cleared and the final `rewind_summary` (rewind-execution.ts step 4). */
export async function finishRewind(plane: ControlPlane, ids: UpdateIds) {
  const { env } = await openUpdate(plane, ids);
  const plan = await readRewindPlan(plane.bucket, ids);
  const rewound = { datasets: plan.datasets, cut: plan.cut.datasets };
  return { summaryEventId: await completeRewind(env, rewound, ids.updateId) };
}
