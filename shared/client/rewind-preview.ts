import { TERMINAL_STATES, type DatasetInfo, type EbbClient, type UpdateInfo } from "./ebb-client.ts";

/**
 * What a rewind would do, asked of the API: a dry run (every check the real rewind makes, nothing
 * changed) names the affected datasets, their target versions and the flows it moves back in its
 * `planning_information`; the change feed from each target to now is what the rewind undoes, row by
 * row. The web UI's review step and the MCP server's plan both show this.
 */

export interface RewindSpecBody {
  readonly rewind_point_id?: string;
  readonly rewind_timestamp?: string;
  readonly datasets?: readonly {
    readonly identifier: string;
    readonly cascade?: boolean;
    readonly reset_checkpoints?: boolean;
  }[];
}

export interface AffectedDataset {
  readonly identifier: string;
  readonly name: string;
  readonly type: string;
  readonly versionNow: number | undefined;
  /** -1: a dataset the point does not know, which the rewind empties. */
  readonly targetVersion: number;
  /** The flows the rewind moves back, each to the checkpoint it names. */
  readonly flows: readonly { readonly flow: string; readonly seq: number }[];
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
const POLL_MS = 400;

/** The dry-run update's plan, as `planning_information` records it. */
interface RewindPlanning {
  readonly datasets?: readonly {
    readonly dataset: string;
    /** Null: a dataset the point does not know, emptied (its whole change feed undone). */
    readonly target_version: number | null;
    readonly flows?: readonly { readonly flow: string; readonly seq: number }[];
  }[];
}

export class RewindPreviewError extends Error {
  override readonly name = "RewindPreviewError";
  constructor(
    readonly update: UpdateInfo,
    message: string,
  ) {
    super(message);
  }
}

export async function previewRewind(
  client: EbbClient,
  pipelineId: string,
  spec: RewindSpecBody,
  datasets: readonly DatasetInfo[],
  signal?: AbortSignal,
): Promise<RewindPreview> {
  const { update_id } = await client.startUpdate(pipelineId, {
    cause: "USER_ACTION",
    rewind_spec: { ...spec, dry_run: true },
  });
  const update = await waitForUpdate(client, pipelineId, update_id, signal);
  if (update.state !== "COMPLETED") {
    throw new RewindPreviewError(update, update.error?.message ?? `the dry run ended ${update.state}`);
  }
  const { events } = await client.events(pipelineId, {
    filter: `origin.update_id = '${update_id}' AND event_type = 'planning_information'`,
    max_results: 10,
  });
  const plan = events[0]?.details["planning_information"] as RewindPlanning | undefined;
  const byIdentifier = new Map(datasets.map((d) => [d.identifier, d]));
  const affected = await Promise.all(
    (plan?.datasets ?? []).map(async (d) => {
      const now = byIdentifier.get(d.dataset);
      return {
        identifier: d.dataset,
        name: now?.name ?? d.dataset,
        type: now?.type ?? "",
        versionNow: now?.version ?? undefined,
        targetVersion: d.target_version ?? -1,
        flows: d.flows ?? [],
        undo: await undoPreview(client, d.dataset, d.target_version ?? -1, now?.version ?? undefined),
      };
    }),
  );
  return { dryRunUpdateId: update_id, datasets: affected };
}

/** The change feed after `target` up to `now`: what restoring `target` takes back. */
async function undoPreview(
  client: EbbClient,
  table: string,
  target: number,
  now: number | undefined,
): Promise<UndoPreview> {
  const counts = { inserted: 0, updated: 0, deleted: 0 };
  const sample: Record<string, unknown>[] = [];
  if (now === undefined || now <= target) return { ...counts, sample, partial: false };
  let pageToken: string | undefined;
  let pages = 0;
  do {
    const page = await client.changes(table, {
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

/** Polls the update until it ends; an aborted signal stops the wait. */
export async function waitForUpdate(
  client: EbbClient,
  pipelineId: string,
  updateId: string,
  signal?: AbortSignal,
): Promise<UpdateInfo> {
  for (;;) {
    const { update } = await client.getUpdate(pipelineId, updateId);
    if (TERMINAL_STATES.includes(update.state)) return update;
    if (signal?.aborted) throw new Error("stopped waiting");
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
