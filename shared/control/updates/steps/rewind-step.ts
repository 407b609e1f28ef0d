import { z } from "zod";
import { RewindStoppedError } from "../../../rewind/errors.ts";
import type { RewindEnvironment } from "../../../rewind/rewind-environment.ts";
import { EVENT_TYPES, eventsOfType } from "../../../rewind/rewind-events.ts";
import { publishOnce } from "../../plane/lifecycle-events.ts";
import { rewindCompleted } from "../lifecycle-event-builders.ts";
import { completeRewind, rewindDataset } from "../../../rewind/rewind-execution.ts";
import { retriedByTask } from "../update-tasks.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import { readRewindPlan } from "../rewind-plan-record.ts";
import type { DatasetItem } from "./plan-step.ts";
import { openUpdate, type UpdateIds } from "./update-context.ts";
import { intentOf } from "../update-intent.ts";
import { finishPublish, publishDataset } from "./publish-execution.ts";
import { CodedError } from "../../../errors/coded-error.ts";

/**
 * The rewind branch's steps, working from the plan start-update recorded (rewind-plan-record.ts).
 * `rewindDataset` plans each RESTORE against the table as it is, so a retried step converges. A
 * publish update (publish-execution.ts) runs its tables through the same two tasks.
 */

/** One dataset: its RESTORE and its flows' HEAD moves (rewind_progress event). */
export async function rewindOneDataset(plane: ControlPlane, item: DatasetItem) {
  const context = await openUpdate(plane, item);
  if (intentOf(context.update).kind === "publish") {
    try {
      return await publishDataset(plane, context, item, item.dataset);
    } catch (error) {
      if (retriedByTask(error) || error instanceof CodedError) throw error;
      throw new RewindStoppedError(item.dataset, error);
    }
  }
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

/**
 * After every wave: the block cleared and the final `rewind_summary` (rewind-execution.ts step 2),
 * then "Rewind Completed" with each table's version and the commit that did it (docs/events.md).
 */
export async function finishRewind(plane: ControlPlane, ids: UpdateIds) {
  const context = await openUpdate(plane, ids);
  if (intentOf(context.update).kind === "publish") return finishPublish(plane, context, ids);
  const { env, pipeline } = context;
  const plan = await readRewindPlan(plane.bucket, ids);
  const rewound = { datasets: plan.datasets, cut: plan.cut.datasets, time: plan.cut.time };
  const summaryEventId = await completeRewind(env, rewound, ids.updateId);
  const origin = { ...ids, pipelineName: pipeline.definition.name, time: plane.clock() };
  await publishOnce(plane, rewindCompleted(origin, plan, await rewindCommits(env, ids.updateId)));
  return { summaryEventId };
}

/** Per dataset, the commit this update's rewind made to it (its `rewind_progress` events). */
async function rewindCommits(env: RewindEnvironment, updateId: string): Promise<Map<string, number>> {
  const commits = new Map<string, number>();
  for (const event of await eventsOfType(env.events, env.pipelineId, EVENT_TYPES.rewindProgress)) {
    if (event.origin.update_id !== updateId) continue;
    const progress = rewindProgressSchema.safeParse(event.details["rewind_progress"]);
    const dataset = event.origin.dataset_name;
    if (!progress.success || dataset === undefined) continue;
    const commit = progress.data.restore_version ?? progress.data.truncate_version;
    if (commit !== null && commit !== undefined) commits.set(dataset, commit);
  }
  return commits;
}

/** The part of a `rewind_progress` event's details read here (rewind-execution.ts writes it). */
const rewindProgressSchema = z.object({
  restore_version: z.number().int().nullable(),
  truncate_version: z.number().int().nullable().optional(),
});
