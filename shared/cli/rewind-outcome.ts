import type { EbbClient, EventInfo, UpdateInfo } from "../client/ebb-client.ts";
import { formatTable } from "./output-format.ts";
import type { Out } from "./pipeline-commands.ts";

/**
 * What a finished `ebb rewind` did, from its update's events: for a dry run, what a rewind would
 * restore (its plan's `planning_information`; the `rewind_summary` records the whole point); for a
 * rewind, each dataset's RESTORE and the flows moved back (`rewind_progress`). Then the next
 * command: the rewind itself, or the replay.
 */
export async function printRewindOutcome(
  client: EbbClient,
  pipelineId: string,
  update: UpdateInfo,
  out: Out,
): Promise<void> {
  if (update.state !== "COMPLETED") return;
  const { events } = await client.events(pipelineId, {
    filter: `origin.update_id = '${update.update_id}' AND event_type IN ('rewind_summary', 'rewind_progress', 'planning_information')`,
    max_results: 1000,
  });
  const summary = detailsOf<RewindSummary>(events, "rewind_summary")[0];
  if (!summary) return;
  if (summary.dry_run) {
    // The plan: the datasets of the selection (and the definition), not every one the point holds.
    const planned = detailsOf<RewindPlanning>(events, "planning_information")[0]?.datasets ?? [];
    const flows = planned.flatMap((d) => d.flows ?? []);
    out(`dry run, nothing changed: a rewind to ${summary.timestamp} restores\n`);
    out(
      formatTable(
        planned.map((d) => ({
          dataset: d.dataset,
          // A dataset the point does not know is emptied (TRUNCATE) or dropped, not restored.
          action: d.action ?? "RESTORE",
          version: d.target_version ?? "-",
        })),
      ),
    );
    if (planned.some((d) => d.target_version === null))
      out(
        `datasets the point does not know are emptied; their flows read their sources from the start on replay\n`,
      );
    if (flows.length > 0)
      out(`and moves flows back to checkpoints ${flows.map((f) => `${f.flow}@${f.seq}`).join(", ")}\n`);
    out(`rewind: run the same command without --dry-run\n`);
    return;
  }
  const restores = detailsOf<RewindProgress>(events, "rewind_progress");
  if (restores.every((restore) => restore.restore_version === undefined))
    out("every dataset was already at the point's version: no RESTORE was needed\n");
  out(
    formatTable(
      restores.map((restore) => ({
        dataset: restore.dataset,
        action: restore.action ?? "RESTORE",
        restored_version: restore.target_version ?? "-",
        // No RESTORE commit when the table already was at that version.
        restore_commit: restore.restore_version ?? "-",
        files_removed: restore.operation_metrics?.numRemovedFiles ?? "-",
        files_restored: restore.operation_metrics?.numRestoredFiles ?? "-",
        flows: (restore.flows ?? []).map((f) => `${f.flow} ${f.from}->${f.to}`).join(", "),
      })),
    ),
  );
  out(`replay: ebb run ${pipelineId}\n`);
}

interface RewindSummary {
  readonly dry_run: boolean;
  readonly timestamp: string;
}

/** A rewind's `planning_information`: the datasets it restores and the flows it moves back. */
interface RewindPlanning {
  readonly datasets?: readonly {
    readonly dataset: string;
    /** RESTORE, or TRUNCATE / DROP for a dataset the point does not know (target_version null). */
    readonly action?: string;
    readonly target_version: number | null;
    readonly flows?: readonly { readonly flow: string; readonly seq: number }[];
  }[];
}

interface RewindProgress {
  readonly dataset: string;
  readonly action?: string;
  readonly target_version: number | null;
  readonly restore_version?: number;
  readonly operation_metrics?: { readonly numRemovedFiles?: number; readonly numRestoredFiles?: number };
  readonly flows?: readonly { readonly flow: string; readonly from: number; readonly to: number }[];
}

/** The `details[type]` of each event of that type, oldest first (the API answers newest first). */
function detailsOf<T>(events: readonly EventInfo[], type: string): T[] {
  return events
    .filter((event) => event.event_type === type)
    .map((event) => event.details[type] as T)
    .reverse();
}
