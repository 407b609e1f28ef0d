import { fencedOut } from "../engine/errors.ts";
import { ROOT_SEQ } from "../store/checkpoints-repository.ts";
import { DEFAULT_EVENT_RETENTION_MS } from "../store/event-log-repository.ts";
import { resetTable } from "./dataset-reset.ts";
import { recordDatasetReset, type DatasetResetRecord } from "./full-refresh-record.ts";
import type { RefreshPlan } from "./refresh-plan.ts";
import { flowRef, tableWriteFence, type RewindEnvironment } from "./rewind-environment.ts";
import { appendEvent, EVENT_TYPES } from "./rewind-events.ts";

/**
 * Doing a refresh plan's resets, before the run (semantics.md "Refresh and reset"). Idempotent, so a
 * retried task converges:
 *
 * 1. Record the plan's warnings as `warning` events.
 * 2. Per dataset to reset, upstream first: reset its table (DROP / TRUNCATE / its owned rows), move its
 *    flows' HEAD to the root (a fresh checkpoint: no offsets, empty state), and record a
 *    `dataset_reset` event, which also makes a later rewind to a point before it
 *    `REWIND_BEFORE_FULL_REFRESH`.
 * 3. Checkpoint resets: HEAD to the root, table untouched, and one `checkpoint_reset` event naming
 *    the flows.
 * The run that follows (the engine's) reprocesses from the root. Answers the datasets' resets as
 * recorded, and the flows whose checkpoint was reset (their lifecycle events, docs/events.md).
 */
export async function executeRefreshPlan(
  env: RewindEnvironment,
  plan: RefreshPlan,
  updateId: string,
): Promise<{ readonly resets: readonly DatasetResetRecord[]; readonly checkpointResets: readonly string[] }> {
  const resets: DatasetResetRecord[] = [];
  for (const message of plan.warnings) {
    await appendEvent(env, {
      event_type: EVENT_TYPES.warning,
      level: "WARN",
      message,
      updateId,
      details: {},
      timestamp: env.clock(),
      retentionMs: DEFAULT_EVENT_RETENTION_MS,
    });
  }
  if (plan.mode !== "INCREMENTAL") {
    for (const reset of plan.resets) {
      const fence = () => tableWriteFence(env, updateId)(`the reset of ${reset.dataset}`);
      const result = await resetTable(env.tableStore(reset.dataset), reset.reset, env.clock, fence);
      for (const flow of reset.flows) await resetHead(env, flow, updateId);
      if (reset.reset.how === "NONE") continue;
      const record: DatasetResetRecord = {
        dataset: reset.dataset,
        refresh: plan.mode,
        how: reset.reset.how,
        at: env.clock(),
        ...(result.version !== undefined ? { tableVersion: result.version } : {}),
      };
      await recordDatasetReset(env, record, updateId);
      resets.push(record);
    }
  }
  const flows = plan.checkpointResets.map((ref) => ref.flow);
  for (const flow of flows) await resetHead(env, flow, updateId);
  if (flows.length > 0) {
    await appendEvent(env, {
      event_type: EVENT_TYPES.checkpointReset,
      level: "INFO",
      message: `Reset the checkpoint of ${flows.length === 1 ? "flow" : "flows"} ${flows.join(", ")}: ${flows.length === 1 ? "it reads" : "they read"} again from the sources' start, the tables untouched`,
      updateId,
      details: { checkpoint_reset: { flows } },
      timestamp: env.clock(),
      retentionMs: DEFAULT_EVENT_RETENTION_MS,
    });
  }
  return { resets, checkpointResets: flows };
}

/** HEAD to the root, also when it is there: the move abandons a batch planned on the root. */
async function resetHead(env: RewindEnvironment, flow: string, updateId: string): Promise<void> {
  const ref = flowRef(env, flow);
  const moved = await env.checkpoints.moveHead(ref, ROOT_SEQ, { activeUpdateId: updateId });
  if (moved.outcome === "fenced") throw fencedOut(updateId, `resetting flow ${flow}'s checkpoint`, moved);
}
