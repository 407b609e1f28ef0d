import { rewindDataset } from "../../rewind/rewind-execution.ts";
import { appendEvent } from "../../rewind/rewind-events.ts";
import { rewindSummaryEvent } from "../../rewind/rewind-point.ts";
import type { ControlPlane } from "../control-plane.ts";
import { readRewindPlan } from "./rewind-plan-record.ts";
import type { DatasetItem } from "./plan-step.ts";
import { openUpdate, type UpdateIds } from "./update-context.ts";

/**
 * The rewind branch's steps, working from the plan the Plan step recorded (rewind-plan-record.ts).
 * `rewindDataset` re-plans each RESTORE against the table as it is, so a retried step converges.
 */

/** One dataset: its RESTORE and its flows' HEAD moves (rewind_progress event). */
export async function rewindOneDataset(plane: ControlPlane, item: DatasetItem) {
  const context = await openUpdate(plane, item);
  const plan = await readRewindPlan(plane.bucket, item);
  const dataset = plan.datasets.find((d) => d.dataset === item.dataset);
  if (!dataset)
    throw new TypeError(`dataset ${item.dataset} is not in the rewind of update ${item.updateId}`);
  const done = await rewindDataset(context.env, dataset, item.updateId);
  return { dataset: done.dataset, restoreVersion: done.restoreVersion ?? null };
}

/**
 * After every wave: the block cleared and the final `rewind_summary` (dry_run false) recording the
 * datasets and flows at their targets — what `executeRewind` does after its own loop over datasets.
 */
export async function finishRewind(plane: ControlPlane, ids: UpdateIds) {
  const { env } = await openUpdate(plane, ids);
  const plan = await readRewindPlan(plane.bucket, ids);
  await plane.pipelines.setRewindBlock(ids.pipelineId, { blocked: false });
  const now = plane.clock();
  const summary = await appendEvent(
    env,
    rewindSummaryEvent({
      catalog: env.pipeline.definition.catalog,
      schema: env.pipeline.definition.schema,
      kind: "rewind",
      cut: {
        time: now,
        datasets: new Map(
          plan.datasets.flatMap((d) => {
            const at = plan.cut.get(d.dataset);
            return at ? [[d.dataset, at] as const] : [];
          }),
        ),
        flows: new Map(plan.datasets.flatMap((d) => d.flows.map((f) => [f.flow, f.targetSeq] as const))),
      },
      now,
      retentionMs: env.pipeline.settings.rewindRetentionMs,
      updateId: ids.updateId,
    }),
  );
  return { summaryEventId: summary.id };
}
