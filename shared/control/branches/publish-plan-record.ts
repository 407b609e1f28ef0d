import { z } from "zod";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { TableSnapshots } from "../../rewind/table-snapshots.ts";
import { updateStateKey } from "../../store/bucket-layout.ts";
import { publishRestoreVersion, type PublishedTable } from "./branch-offsets.ts";

/**
 * A publish update's plan (docs/branches.md "Publish"), made and recorded once by the publish request
 * (where every check runs, with the pipeline held) and read by the state machine's steps, as a
 * rewind's plan is (rewind-plan-record.ts). Per table, upstream first: the live version the branch
 * was made against (a step finding live elsewhere, and not at the branch, refuses: BRANCH_OUT_OF_DATE)
 * and the branch's version it publishes. Parsed with its schema on every read.
 */

const recordSchema = z.object({
  branch: z.string(),
  /** The point captured before the publish: rewinding to it undoes it. */
  rewindPointId: z.string().nullable(),
  tables: z.array(
    z.object({
      dataset: z.string(),
      identifier: z.string(),
      /** Live's version when the branch was made (null: no live table then). */
      liveVersion: z.number().int().nullable(),
      /** The branch log's latest version (null: the branch has no log of it; live is emptied). */
      branchVersion: z.number().int().nullable(),
      /** Live's version the branch began from (null: empty at the point). */
      sourceVersion: z.number().int().nullable(),
    }),
  ),
});
export type PublishPlan = z.infer<typeof recordSchema>;
export type PublishedTablePlan = PublishPlan["tables"][number];

/** The publish update's ids (steps/update-context.ts's UpdateIds). */
type UpdateIds = { readonly pipelineId: string; readonly updateId: string };

function planKey(ids: UpdateIds): string {
  return updateStateKey(ids.pipelineId, ids.updateId, "publish-plan.json");
}

export async function recordPublishPlan(bucket: ObjectStore, ids: UpdateIds, plan: PublishPlan) {
  await bucket.put(planKey(ids), new TextEncoder().encode(JSON.stringify(recordSchema.parse(plan))));
}

export async function readPublishPlan(bucket: ObjectStore, ids: UpdateIds): Promise<PublishPlan> {
  return recordSchema.parse(JSON.parse(new TextDecoder().decode(await bucket.get(planKey(ids)))));
}

/**
 * By table id, what the publish makes live of each table the branch has a log of: what a branch
 * reader's offset is translated by (branch-offsets.ts's offsetsOnLive). A RESTORE keeps live's id.
 */
export async function publishedTables(
  snapshots: TableSnapshots,
  tables: readonly PublishedTablePlan[],
): Promise<Map<string, PublishedTable>> {
  const published = new Map<string, PublishedTable>();
  for (const table of tables) {
    if (table.branchVersion === null) continue;
    const id = (await snapshots.latest(table.dataset))?.metadata.id;
    if (id !== undefined)
      published.set(id, {
        restoredVersion: publishRestoreVersion(table),
        branchVersion: table.branchVersion,
      });
  }
  return published;
}
