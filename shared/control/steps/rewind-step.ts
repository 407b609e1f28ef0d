import { rewindDataset } from "../../rewind/rewind-execution.ts";
import { appendEvent } from "../../rewind/rewind-events.ts";
import { planRewind } from "../../rewind/rewind-plan.ts";
import { rewindSummaryEvent } from "../../rewind/rewind-point.ts";
import type { ControlPlane } from "../control-plane.ts";
import { intentOf } from "../update-request.ts";
import type { DatasetItem } from "./plan-step.ts";
import { openUpdate, type UpdateIds } from "./update-context.ts";

/**
 * The rewind branch's steps. Each re-plans the rewind from the recorded `rewind_spec` (a plan is a
 * pure function of storage, and RESTOREs already done show as datasets at their target), so a retried
 * or repeated step converges on the same end state.
 */

async function replan(plane: ControlPlane, ids: UpdateIds) {
  const context = await openUpdate(plane, ids);
  const intent = intentOf(context.update, plane.clock());
  if (intent.kind !== "rewind") throw new TypeError(`update ${ids.updateId} is not a rewind`);
  return { context, plan: await planRewind(context.env, intent.spec) };
}

/** One dataset: its RESTORE and its flows' HEAD moves (rewind_progress event). */
export async function rewindOneDataset(plane: ControlPlane, item: DatasetItem) {
  const { context, plan } = await replan(plane, item);
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
  const { context, plan } = await replan(plane, ids);
  const { env } = context;
  await plane.pipelines.setRewindBlock(ids.pipelineId, { blocked: false });
  const now = plane.clock();
  const { cut } = plan.resolved;
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
            const at = cut.datasets.get(d.dataset);
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
