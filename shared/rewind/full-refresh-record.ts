import { RewindBeforeFullRefreshError } from "./errors.ts";
import type { RewindEnvironment } from "./rewind-environment.ts";
import { appendEvent, EVENT_TYPES, eventsOfType } from "./rewind-events.ts";
import { qualifiedName } from "./pipeline-datasets.ts";
import type { PipelineCut } from "./rewind-point.ts";
import type { TableSnapshots } from "./table-snapshots.ts";

/**
 * Full refreshes and resets, recorded durably so that a later rewind to a point before one is refused
 * with `REWIND_BEFORE_FULL_REFRESH` (semantics.md "Rewind request"). Each is a `dataset_reset` event
 * per dataset. It lives at least as long as rewind points do (and the 30 days of ordinary events): a
 * record can only matter to a target inside the rewind retention, since older targets are refused
 * as `BEYOND_RETENTION` anyway. Rewind points also carry each table's id, so a DROP is caught even
 * without the record.
 */

const MIN_RECORD_TTL_MS = 30 * 86_400_000;

export interface DatasetResetRecord {
  readonly dataset: string;
  /** FULL (reprocessed) or RESET (emptied only). */
  readonly refresh: "FULL" | "RESET";
  /** DROP, TRUNCATE, or OWNED_ROWS (a shared sink's own rows deleted). */
  readonly how: "DROP" | "TRUNCATE" | "OWNED_ROWS";
  /** Epoch ms. */
  readonly at: number;
  /** The table version that reset it (TRUNCATE, OWNED_ROWS), if any. */
  readonly tableVersion?: number;
}

export async function recordDatasetReset(
  env: RewindEnvironment,
  record: DatasetResetRecord,
  updateId?: string,
): Promise<void> {
  await appendEvent(env, {
    event_type: EVENT_TYPES.datasetReset,
    level: "INFO",
    message: `${record.refresh === "FULL" ? "Full refresh" : "Reset"} of ${qualifiedName(env.pipeline, record.dataset)} (${record.how})`,
    dataset: record.dataset,
    ...(updateId !== undefined ? { updateId } : {}),
    details: { dataset_reset: { ...record } },
    timestamp: record.at,
    retentionMs: Math.max(MIN_RECORD_TTL_MS, env.pipeline.settings.rewindRetentionMs),
  });
}

/** Per dataset, the time of its latest live reset record. */
export async function lastResets(env: RewindEnvironment): Promise<Map<string, number>> {
  const events = await eventsOfType(env.events, env.pipelineId, EVENT_TYPES.datasetReset);
  const latest = new Map<string, number>();
  for (const event of events) {
    const record = event.details["dataset_reset"] as DatasetResetRecord | undefined;
    if (!record) continue;
    latest.set(record.dataset, Math.max(latest.get(record.dataset) ?? 0, record.at));
  }
  return latest;
}

/**
 * `REWIND_BEFORE_FULL_REFRESH` (semantics.md "Rewind request"), the one place that decides it: a
 * rewind to `cut` may not touch a dataset reset after the cut's time (a record says so), or whose
 * table the cut saw has since been dropped and recreated (another table id). The rewind's plan and
 * the rewind-point listing both ask this.
 */
export async function refusedAsBeforeFullRefresh(
  env: RewindEnvironment,
  snapshots: TableSnapshots,
  cut: PipelineCut,
  datasets: Iterable<string>,
  resets: ReadonlyMap<string, number>,
): Promise<RewindBeforeFullRefreshError | undefined> {
  const refused: { dataset: string; refreshedAt?: number }[] = [];
  for (const dataset of datasets) {
    const at = resets.get(dataset);
    const refreshed = at !== undefined && at > cut.time;
    const targetId = cut.datasets.get(dataset)?.tableId;
    const recreated =
      !refreshed &&
      targetId !== undefined &&
      targetId !== "" &&
      targetId !== (await snapshots.latest(dataset))?.metadata.id;
    if (refreshed || recreated)
      refused.push({
        dataset: qualifiedName(env.pipeline, dataset),
        ...(refreshed ? { refreshedAt: at } : {}),
      });
  }
  return refused.length > 0 ? new RewindBeforeFullRefreshError(refused, cut.time) : undefined;
}
