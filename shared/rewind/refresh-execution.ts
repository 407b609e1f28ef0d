import { fencedOut } from "../engine/errors.ts";
import { ROOT_SEQ } from "../store/checkpoints-repository.ts";
import { DEFAULT_EVENT_RETENTION_MS } from "../store/event-log-repository.ts";
import { resetTable } from "./dataset-reset.ts";
import { recordDatasetReset, type DatasetResetRecord } from "./full-refresh-record.ts";
import type { DatasetResetPlan, RefreshPlan } from "./refresh-plan.ts";
import { RefreshIncompleteError } from "./errors.ts";
import { flowRef, tableWriteFence, type RewindEnvironment } from "./rewind-environment.ts";
import { appendEvent, EVENT_TYPES } from "./rewind-events.ts";

/**
 * Doing a refresh plan's resets, before the run (semantics.md "Refresh and reset"). Idempotent, so a
 * retried task converges:
 *
 * 1. Record the plan's warnings as `warning` events.
 * 2. Before the first table reset, mark the pipeline record (write-ahead, only while the update is
 *    still the active one): the datasets' resets are under way. A stop or crash between a table's
 *    reset and its flows' HEAD move leaves it set, and the next updates that do not reset those
 *    datasets again are refused (`PIPELINE_REFRESH_INCOMPLETE`, update-guard.ts) instead of reading on
 *    from old checkpoints into emptied tables. A stop is also told as a WARN event naming them.
 * 3. Per dataset to reset, upstream first: reset its table (DROP / TRUNCATE / its owned rows), move its
 *    flows' HEAD to the root (a fresh checkpoint: no offsets, empty state), and record a
 *    `dataset_reset` event, which also makes a later rewind to a point before it
 *    `REWIND_BEFORE_FULL_REFRESH`.
 *    Once every dataset is reset and its flows are at the root, the mark is cleared.
 * 4. Checkpoint resets: HEAD to the root, table untouched, and one `checkpoint_reset` event naming
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
  const marked = plan.mode === "INCREMENTAL" ? [] : destructiveResets(plan);
  if (marked.length > 0) {
    const mark = await env.pipelines.markResetUnderWay(env.pipelineId, {
      updateId,
      datasets: marked,
      since: env.clock(),
    });
    if (mark.outcome === "not-active") throw fencedOut(updateId, "marking the refresh's resets", mark);
    try {
      for (const reset of plan.resets) resets.push(...(await resetDataset(env, plan, reset, updateId)));
    } catch (error) {
      await warnStoppedPartWay(env, marked, updateId);
      throw error;
    }
    await env.pipelines.clearResetUnderWay(env.pipelineId);
  } else if (plan.mode !== "INCREMENTAL") {
    for (const reset of plan.resets) resets.push(...(await resetDataset(env, plan, reset, updateId)));
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

/** The datasets whose table a reset changes (a view stores nothing), upstream first. */
function destructiveResets(plan: RefreshPlan): string[] {
  return plan.resets.filter((r) => r.reset.how !== "NONE").map((r) => r.dataset);
}

/** Step 3 for one dataset: its table, its flows' HEAD, its `dataset_reset` record (none for a view). */
async function resetDataset(
  env: RewindEnvironment,
  plan: RefreshPlan,
  reset: DatasetResetPlan,
  updateId: string,
): Promise<DatasetResetRecord[]> {
  const fence = () => tableWriteFence(env, updateId)(`the reset of ${reset.dataset}`);
  const result = await resetTable(env.tableStore(reset.dataset), reset.reset, env.clock, fence);
  for (const flow of reset.flows) await resetHead(env, flow, updateId);
  if (reset.reset.how === "NONE" || plan.mode === "INCREMENTAL") return [];
  const record: DatasetResetRecord = {
    dataset: reset.dataset,
    refresh: plan.mode,
    how: reset.reset.how,
    at: env.clock(),
    ...(result.version !== undefined ? { tableVersion: result.version } : {}),
  };
  await recordDatasetReset(env, record, updateId);
  return [record];
}

/**
 * The resets stopped (or failed) part-way: said as a WARN while the mark still names this update (a
 * retried task that finishes them clears it). Best effort: the mark, not this event, keeps data safe.
 */
async function warnStoppedPartWay(
  env: RewindEnvironment,
  datasets: readonly string[],
  updateId: string,
): Promise<void> {
  try {
    const record = await env.pipelines.get(env.pipelineId);
    if (record?.resetUnderWay?.updateId !== updateId) return;
    await appendEvent(env, {
      event_type: EVENT_TYPES.warning,
      level: "WARN",
      message: new RefreshIncompleteError(updateId, datasets).message,
      updateId,
      details: { refresh_incomplete: { datasets: [...datasets] } },
      timestamp: env.clock(),
      retentionMs: DEFAULT_EVENT_RETENTION_MS,
    });
  } catch {
    // The update's own error is the one to report.
  }
}

/** HEAD to the root, also when it is there: the move abandons a batch planned on the root. */
async function resetHead(env: RewindEnvironment, flow: string, updateId: string): Promise<void> {
  const ref = flowRef(env, flow);
  const moved = await env.checkpoints.moveHead(ref, ROOT_SEQ, { activeUpdateId: updateId });
  if (moved.outcome === "fenced") throw fencedOut(updateId, `resetting flow ${flow}'s checkpoint`, moved);
}
