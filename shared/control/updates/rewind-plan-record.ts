import { z } from "zod";
import type { StateDefinitionDrift } from "../../engine/stateful/state-definition.ts";
import type { DatasetRewind, RewindPlan } from "../../rewind/rewind-plan.ts";
import type { PipelineCut } from "../../rewind/rewind-point.ts";
import { NOT_IN_POINT_MODES } from "../../rewind/rewind-spec.ts";
import { updateStateKey } from "../../store/bucket-layout.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { UpdateRecord } from "../../store/updates-repository.ts";

/**
 * A rewind's plan, made and recorded once by start-update (where every check runs) and read by the
 * state machine's steps, so no step plans the rewind again. It keeps only what they read: per dataset
 * what is done (a RESTORE to its target, or emptied), the flows whose HEAD moves and the version its
 * files were checked at; the views reading them (the plan's events); and the target cut (the dry
 * run's point, the final summary). Parsed with its schema on every read.
 */

const version = z.number().int().nonnegative();

const recordSchema = z.object({
  dryRun: z.boolean(),
  rewindPointId: z.string().optional(),
  cutId: z.string().optional(),
  cut: z.object({
    time: z.number(),
    datasets: z.array(z.tuple([z.string(), z.object({ version, tableId: z.string() })])),
    flows: z.array(z.tuple([z.string(), z.number().int()])),
  }),
  datasets: z.array(
    z.object({
      dataset: z.string(),
      identifier: z.string(),
      action: z.enum(["RESTORE", ...NOT_IN_POINT_MODES]),
      targetVersion: version.optional(),
      resetCheckpoints: z.boolean(),
      checkedVersion: version.optional(),
      flows: z.array(
        z.object({
          flow: z.string(),
          dataset: z.string(),
          targetSeq: z.number().int(),
          currentSeq: z.number().int(),
        }),
      ),
    }),
  ),
  views: z.array(z.string()),
  stateDrift: z.array(
    z.object({
      flow: z.string(),
      checkpointSeq: z.number().int(),
      state: z.array(z.string()),
      message: z.string(),
    }),
  ),
});

export interface RewindPlanRecord {
  readonly dryRun: boolean;
  /** The rewind point the target resolved to, when it is one (its lifecycle events name it). */
  readonly rewindPointId?: string;
  /** The request id of the cut across pipelines this rewind is part of (cut-rewind.ts). */
  readonly cutId?: string;
  readonly cut: PipelineCut;
  /** Upstream first. */
  readonly datasets: readonly DatasetRewind[];
  readonly views: readonly string[];
  readonly stateDrift: readonly StateDefinitionDrift[];
}

/** The update whose plan it is: its ids, as start-update and every step have them. */
type UpdateIds = Pick<UpdateRecord, "pipelineId" | "updateId">;

function planKey(ids: UpdateIds): string {
  return updateStateKey(ids.pipelineId, ids.updateId, "rewind-plan.json");
}

export async function recordRewindPlan(
  bucket: ObjectStore,
  ids: UpdateIds,
  plan: RewindPlan,
  cutId?: string,
): Promise<void> {
  const { cut, rewindPointId } = plan.resolved;
  const recorded: z.input<typeof recordSchema> = {
    dryRun: plan.dryRun,
    ...(rewindPointId !== undefined ? { rewindPointId } : {}),
    ...(cutId !== undefined ? { cutId } : {}),
    cut: { time: cut.time, datasets: [...cut.datasets], flows: [...cut.flows] },
    datasets: plan.datasets.map((d) => ({
      dataset: d.dataset,
      identifier: d.identifier,
      action: d.action,
      ...(d.targetVersion !== undefined ? { targetVersion: d.targetVersion } : {}),
      resetCheckpoints: d.resetCheckpoints,
      ...(d.checkedVersion !== undefined ? { checkedVersion: d.checkedVersion } : {}),
      flows: [...d.flows],
    })),
    views: [...plan.views],
    stateDrift: plan.stateDrift.map((d) => ({ ...d, state: [...d.state] })),
  };
  await bucket.put(planKey(ids), new TextEncoder().encode(JSON.stringify(recorded)));
}

export async function readRewindPlan(bucket: ObjectStore, ids: UpdateIds): Promise<RewindPlanRecord> {
  const text = new TextDecoder().decode(await bucket.get(planKey(ids)));
  const recorded = recordSchema.parse(JSON.parse(text));
  return {
    dryRun: recorded.dryRun,
    ...(recorded.rewindPointId !== undefined ? { rewindPointId: recorded.rewindPointId } : {}),
    ...(recorded.cutId !== undefined ? { cutId: recorded.cutId } : {}),
    cut: {
      time: recorded.cut.time,
      datasets: new Map(recorded.cut.datasets),
      flows: new Map(recorded.cut.flows),
    },
    datasets: recorded.datasets.map(({ targetVersion, checkedVersion, ...d }) => ({
      ...d,
      ...(targetVersion !== undefined ? { targetVersion } : {}),
      ...(checkedVersion !== undefined ? { checkedVersion } : {}),
    })),
    views: recorded.views,
    stateDrift: recorded.stateDrift,
  };
}
