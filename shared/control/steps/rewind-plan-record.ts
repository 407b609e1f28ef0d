import type { DatasetRewind, RewindPlan } from "../../rewind/rewind-plan.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import type { UpdateIds } from "./update-context.ts";

/**
 * A rewind's plan, written once by the Plan step and read by each dataset's step and the final one:
 * the state machine's payloads stay ids only, and no step plans the whole rewind again (which would
 * cost every step the checks of every dataset). Kept with the flows' state, under
 * `state/<pipelineId>/updates/<updateId>/rewind-plan.json`. Each dataset's step still re-plans its
 * own RESTORE against the table as it is (rewind-execution.ts, step 3a), so a retry converges.
 */

interface RecordedPlan {
  readonly datasets: readonly DatasetRewind[];
  /** The target cut's table version and id per dataset (what the final summary records). */
  readonly cut: readonly (readonly [string, { readonly version: number; readonly tableId: string }])[];
}

export interface RewindPlanRecord {
  readonly datasets: readonly DatasetRewind[];
  readonly cut: ReadonlyMap<string, { readonly version: number; readonly tableId: string }>;
}

function planKey(ids: UpdateIds): string {
  return `state/${ids.pipelineId}/updates/${ids.updateId}/rewind-plan.json`;
}

export async function recordRewindPlan(bucket: ObjectStore, ids: UpdateIds, plan: RewindPlan): Promise<void> {
  const recorded: RecordedPlan = { datasets: plan.datasets, cut: [...plan.resolved.cut.datasets] };
  await bucket.put(planKey(ids), new TextEncoder().encode(JSON.stringify(recorded)));
}

export async function readRewindPlan(bucket: ObjectStore, ids: UpdateIds): Promise<RewindPlanRecord> {
  const recorded = JSON.parse(new TextDecoder().decode(await bucket.get(planKey(ids)))) as RecordedPlan;
  return { datasets: recorded.datasets, cut: new Map(recorded.cut) };
}
