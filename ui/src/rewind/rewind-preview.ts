import { ebb } from "../api/client.ts";
import { isTerminal } from "../api/queries.ts";
import type { DatasetInfo, RewindSpec, Update } from "../api/types.ts";

/**
 * What a rewind would do, asked of the API: a dry run (every check the real rewind makes, nothing
 * changed) names the affected datasets and their target versions in its `planning_information`; the
 * change feed from each target to now is what the rewind undoes, row by row.
 */

export interface AffectedDataset {
  readonly identifier: string;
  readonly name: string;
  readonly type: string;
  readonly versionNow: number | undefined;
  /** -1: a dataset the point does not know, which the rewind empties. */
  readonly targetVersion: number;
  readonly undo: UndoPreview;
}

export interface UndoPreview {
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  /** Some of the changed rows (change type in `_change_type`). */
  readonly sample: readonly Record<string, unknown>[];
  /** True when counting stopped at the page limit. */
  readonly partial: boolean;
}

export interface RewindPreview {
  readonly dryRunUpdateId: string;
  readonly datasets: readonly AffectedDataset[];
}

const SAMPLE_ROWS = 8;
const MAX_PAGES = 20;
const PAGE_ROWS = 1000;

export async function previewRewind(
  pipelineId: string,
  spec: RewindSpec,
  datasets: readonly DatasetInfo[],
  signal: AbortSignal,
): Promise<RewindPreview> {
  const { update_id } = await ebb.startUpdate(pipelineId, {
    cause: "USER_ACTION",
    rewind_spec: { ...spec, dry_run: true },
  });
  const update = await waitFor(pipelineId, update_id, signal);
  if (update.state !== "COMPLETED") {
    throw new Error(update.error?.message ?? `the dry run ended ${update.state}`);
  }
  const { events } = await ebb.events(pipelineId, {
    filter: `origin.update_id = '${update_id}' AND event_type = 'planning_information'`,
    max_results: 10,
  });
  // target_version null: a dataset the point does not know, emptied (its whole change feed undone).
  const plan = events[0]?.details["planning_information"] as
    { datasets?: { dataset: string; target_version: number | null }[] } | undefined;
  const byIdentifier = new Map(datasets.map((d) => [d.identifier, d]));
  const affected = await Promise.all(
    (plan?.datasets ?? []).map(async (d) => {
      const info = byIdentifier.get(d.dataset);
      return {
        identifier: d.dataset,
        name: info?.name ?? d.dataset,
        type: info?.type ?? "",
        versionNow: info?.version ?? undefined,
        targetVersion: d.target_version ?? -1,
        undo: await undoPreview(d.dataset, d.target_version ?? -1, info?.version ?? undefined),
      };
    }),
  );
  return { dryRunUpdateId: update_id, datasets: affected };
}

/** The change feed after `target` up to `now`: what restoring `target` takes back. */
async function undoPreview(table: string, target: number, now: number | undefined): Promise<UndoPreview> {
  const counts = { inserted: 0, updated: 0, deleted: 0 };
  const sample: Record<string, unknown>[] = [];
  if (now === undefined || now <= target) return { ...counts, sample, partial: false };
  let pageToken: string | undefined;
  let pages = 0;
  do {
    const page = await ebb.changes(table, {
      starting_version: target + 1,
      ending_version: now,
      max_results: PAGE_ROWS,
      ...(pageToken ? { page_token: pageToken } : {}),
    });
    for (const row of page.changes) {
      const type = row["_change_type"];
      if (type === "insert") counts.inserted++;
      else if (type === "delete") counts.deleted++;
      else if (type === "update_postimage") counts.updated++;
      if (type !== "update_preimage" && sample.length < SAMPLE_ROWS) sample.push(row);
    }
    pageToken = page.next_page_token || undefined;
    pages++;
  } while (pageToken && pages < MAX_PAGES);
  return { ...counts, sample, partial: pageToken !== undefined };
}

export async function waitFor(pipelineId: string, updateId: string, signal: AbortSignal): Promise<Update> {
  for (;;) {
    const { update } = await ebb.getUpdate(pipelineId, updateId);
    if (isTerminal(update.state)) return update as Update;
    if (signal.aborted) throw new Error("stopped waiting");
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
}
