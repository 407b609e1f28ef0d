import { executeRestore, planRestore, type Snapshot } from "../../../delta/index.ts";
import { fencedOut } from "../../../engine/errors.ts";
import { flowRef, tableWriteFence, type RewindEnvironment } from "../../../rewind/rewind-environment.ts";
import { appendEvent, EVENT_TYPES, eventsOfType } from "../../../rewind/rewind-events.ts";
import { resetTable } from "../../../rewind/dataset-reset.ts";
import { writersOf } from "../../../rewind/pipeline-datasets.ts";
import { withTableSnapshots } from "../../../rewind/table-snapshots.ts";
import { branchSnapshot } from "../../../rewind/table-branches.ts";
import { branchPipelineId } from "../../../store/bucket-layout.ts";
import { flowAppId, ROOT_SEQ, type FlowRef } from "../../../store/checkpoints-repository.ts";
import type { ControlPlane } from "../../plane/control-plane.ts";
import type { UpdateContext, UpdateIds } from "./update-context.ts";
import { BranchOutOfDateError } from "../../branches/errors.ts";
import { offsetsOnLive, publishRestoreVersion, type PublishedTable } from "../../branches/branch-offsets.ts";
import {
  publishedTables,
  readPublishPlan,
  type PublishedTablePlan,
} from "../../branches/publish-plan-record.ts";

/**
 * A publish update's steps (docs/branches.md "Publish"), on the rewind branch of the state machine:
 * PlanUpdate answers the tables in waves (planPublishWaves), RewindDataset publishes one table
 * (publishDataset), FinishRewind ends it (finishPublish). Each step works from the plan the publish
 * request recorded (publish-plan-record.ts) and is idempotent, so a retried step or a crash resumes:
 *
 * - each writing flow's checkpoint is planned once (a PLANNED checkpoint of this update is reused);
 * - the RESTORE is planned against live as it is: a table already holding the branch's files and
 *   txns at those seqs is not restored again; a table that moved elsewhere since the branch was made
 *   is refused (`BRANCH_OUT_OF_DATE`);
 * - the checkpoints are committed (already committed: nothing changes), so they move once.
 */

/** PlanUpdate for a publish: the update RESETTING, the pipeline rewind-blocked (write-ahead), waves. */
export async function planPublishWaves(plane: ControlPlane, ids: UpdateIds, context: UpdateContext) {
  const plan = await readPublishPlan(plane.bucket, ids);
  await plane.updates.transition(ids.pipelineId, ids.updateId, "INITIALIZING");
  await plane.pipelines.setState(ids.pipelineId, ids.updateId, "RUNNING");
  await context.events.updateProgress("INITIALIZING");
  await context.events.planningInformation({
    publish: {
      branch: plan.branch,
      rewind_point_id: plan.rewindPointId,
      tables: plan.tables.map((t) => ({
        table: t.identifier,
        live_version: t.liveVersion,
        branch_version: t.branchVersion,
      })),
    },
  });
  await plane.updates.transition(ids.pipelineId, ids.updateId, "RESETTING");
  // As a rewind's: a publish that fails part-way blocks runs until a rewind (to its point) succeeds.
  await plane.pipelines.setRewindBlock(ids.pipelineId, { blocked: true, byUpdateId: ids.updateId });
  const levelOf = new Map(
    context.pipeline.graph.levels.flatMap((names, level) => names.map((name) => [name, level])),
  );
  const waves: { dataset: string; pipelineId: string; updateId: string }[][] = [];
  for (const table of plan.tables)
    (waves[levelOf.get(table.dataset) ?? 0] ??= []).push({ ...ids, dataset: table.dataset });
  return waves.filter(Boolean).map((items) => ({ items }));
}

/** RewindDataset for a publish: one table's checkpoints planned, its RESTORE, its checkpoints HEAD. */
export async function publishDataset(
  plane: ControlPlane,
  context: UpdateContext,
  ids: UpdateIds,
  dataset: string,
) {
  const { env } = context;
  const plan = await readPublishPlan(plane.bucket, ids);
  const table = plan.tables.find((t) => t.dataset === dataset);
  if (!table) throw new TypeError(`dataset ${dataset} is not in the publish of update ${ids.updateId}`);
  const flows = await planCheckpoints(
    env,
    ids.updateId,
    plan.branch,
    writersOf(env.pipeline, dataset),
    await withTableSnapshots(env.tableStore, (snapshots) => publishedTables(snapshots, plan.tables)),
  );
  const liveVersion = await withTableSnapshots(env.tableStore, async (snapshots) => {
    const store = env.tableStore(dataset);
    const current = await snapshots.latest(dataset);
    const fence = tableWriteFence(env, ids.updateId);
    const branch = table.branchVersion === null ? undefined : await branchSnapshot(store, plan.branch);
    if (!branch) {
      if (current && current.version !== table.liveVersion && current.files.size > 0)
        outOfDate(plan.branch, table, current);
      const reset = await resetTable(store, { how: "TRUNCATE" }, env.clock, () =>
        fence(`emptying ${table.identifier}`),
      );
      return reset.version ?? current?.version ?? null;
    }
    if (!current) throw new TypeError(`table ${table.identifier} has a branch log but no live log`);
    const txns = new Map(
      flows
        .filter((f) => f.liveSeq !== ROOT_SEQ)
        .map((f) => {
          const appId = flowAppId(flowRef(env, f.flow));
          return [appId, { appId, version: f.liveSeq, lastUpdated: env.clock() }] as const;
        }),
    );
    // The RESTORE names live's version the branch began from, never a branch version (which live's
    // log numbers otherwise): a reader of live walks live's lineage through it, and a branch reader's
    // offset was put on live's numbering by the same rule (offsetsOnLive).
    const version = publishRestoreVersion(table);
    const restore = planRestore(current, { ...branch, version, txns }, env.clock());
    const needed =
      restore.filesToRestore.length > 0 ||
      restore.filesToRemove.length > 0 ||
      restore.txns.length > 0 ||
      restore.metadata !== undefined ||
      restore.protocol !== undefined;
    // Live already is the branch (a retry after the RESTORE): nothing to commit.
    if (!needed) return current.version;
    if (current.version !== table.liveVersion) outOfDate(plan.branch, table, current);
    const committed = await executeRestore(store, current, restore, {
      clock: env.clock,
      extraParameters: { branch: plan.branch, updateId: ids.updateId },
      beforeCommit: () => fence(`the publish of branch ${plan.branch} to ${table.identifier}`),
    });
    return committed.version;
  });
  await commitCheckpoints(env, ids.updateId, flows, liveVersion ?? 0);
  return { dataset, restoreVersion: liveVersion };
}

function outOfDate(branch: string, table: PublishedTablePlan, current: Snapshot): never {
  throw new BranchOutOfDateError(branch, [
    { table: table.identifier, from: table.liveVersion, now: current.version },
  ]);
}

/**
 * FinishRewind for a publish: the block cleared and one `branch_published` event (once, retried or
 * not) with each table's branch and live versions and its flows' seqs.
 */
export async function finishPublish(plane: ControlPlane, context: UpdateContext, ids: UpdateIds) {
  const { env } = context;
  const plan = await readPublishPlan(plane.bucket, ids);
  await env.pipelines.setRewindBlock(env.pipelineId, { blocked: false });
  const already = (await eventsOfType(env.events, env.pipelineId, EVENT_TYPES.branchPublished)).find(
    (e) => e.origin.update_id === ids.updateId,
  );
  if (already) return { summaryEventId: already.id };
  const tables = [];
  for (const table of plan.tables) {
    const live = await withTableSnapshots(env.tableStore, (s) => s.latest(table.dataset));
    const flows = [];
    for (const flow of writersOf(env.pipeline, table.dataset)) {
      const [branchHead, liveHead] = await Promise.all([
        env.checkpoints.head({
          pipelineId: branchPipelineId(env.pipelineId, plan.branch),
          flowId: flow.name,
        }),
        env.checkpoints.head(flowRef(env, flow.name)),
      ]);
      flows.push({ flow: flow.name, branch_seq: branchHead.seq, live_seq: liveHead.seq });
    }
    tables.push({
      table: table.identifier,
      branch_version: table.branchVersion,
      live_version: live?.version ?? null,
      flows,
    });
  }
  const event = await appendEvent(env, {
    event_type: EVENT_TYPES.branchPublished,
    level: "INFO",
    message: `Published branch ${plan.branch}: ${tables.map((t) => `${t.table} at version ${t.live_version ?? "none"}`).join(", ")}${plan.rewindPointId ? ` (undo: rewind to point ${plan.rewindPointId})` : ""}`,
    updateId: ids.updateId,
    details: {
      branch_published: { branch: plan.branch, rewind_point_id: plan.rewindPointId, tables },
    },
    timestamp: env.clock(),
    retentionMs: env.pipeline.settings.rewindRetentionMs,
  });
  return { summaryEventId: event.id };
}

interface PlannedCheckpoint {
  readonly flow: string;
  /** The new live checkpoint's seq (ROOT_SEQ: the branch's flow is at the root, so live's goes there). */
  readonly liveSeq: number;
  readonly stateVersion?: string;
}

/**
 * Each flow's branch HEAD, planned as live's next checkpoint (offsets and state shared): once per
 * update, so a retried step finds the checkpoint it planned (PLANNED, or committed and HEAD).
 */
async function planCheckpoints(
  env: RewindEnvironment,
  updateId: string,
  branch: string,
  flows: readonly { readonly name: string }[],
  published: ReadonlyMap<string, PublishedTable>,
): Promise<PlannedCheckpoint[]> {
  const planned: PlannedCheckpoint[] = [];
  for (const { name: flow } of flows) {
    const head = await env.checkpoints.head({
      pipelineId: branchPipelineId(env.pipelineId, branch),
      flowId: flow,
    });
    const stateVersion =
      head.checkpoint?.stateVersion !== undefined ? { stateVersion: head.checkpoint.stateVersion } : {};
    if (head.seq === ROOT_SEQ || !head.checkpoint) {
      planned.push({ flow, liveSeq: ROOT_SEQ });
      continue;
    }
    const ref = flowRef(env, flow);
    const resume = await env.checkpoints.resume(ref);
    const mine = [resume.head.checkpoint, ...resume.after].find(
      (c) => c?.updateId === updateId && (c.status === "COMMITTED" || c.seq > resume.abandonedThrough),
    );
    if (mine) {
      planned.push({ flow, liveSeq: mine.seq, ...stateVersion });
      continue;
    }
    const onLive = offsetsOnLive(head.checkpoint.offsets, published);
    // The publish request refused a reader behind its upstream's branch log (BranchReaderBehindError).
    if ("behind" in onLive)
      throw new TypeError(`publish of ${branch}: flow ${flow} is behind its upstream's branch log`);
    const copy = await env.checkpoints.plan(ref, {
      parent: resume.head.seq,
      offsets: onLive.offsets,
      ...(head.checkpoint.stateRef !== undefined ? { stateRef: head.checkpoint.stateRef } : {}),
      updateId,
      activeUpdateId: updateId,
    });
    if (copy.outcome === "fenced") throw fencedOut(updateId, `planning flow ${flow}'s checkpoint`, copy);
    if (copy.outcome !== "planned")
      throw new TypeError(`publish of ${branch}: flow ${flow}'s checkpoint lost its seq to another planner`);
    planned.push({ flow, liveSeq: copy.checkpoint.seq, ...stateVersion });
  }
  return planned;
}

async function commitCheckpoints(
  env: RewindEnvironment,
  updateId: string,
  flows: readonly PlannedCheckpoint[],
  tableVersion: number,
) {
  for (const flow of flows) {
    const ref: FlowRef = flowRef(env, flow.flow);
    if (flow.liveSeq === ROOT_SEQ) {
      const moved = await env.checkpoints.moveHead(ref, ROOT_SEQ, { activeUpdateId: updateId });
      if (moved.outcome === "fenced") throw fencedOut(updateId, `moving flow ${flow.flow}'s HEAD`, moved);
      continue;
    }
    const committed = await env.checkpoints.commit(ref, flow.liveSeq, {
      tableVersion,
      committedAt: env.clock(),
      activeUpdateId: updateId,
      ...(flow.stateVersion !== undefined ? { stateVersion: flow.stateVersion } : {}),
    });
    if (committed.outcome === "fenced")
      throw fencedOut(updateId, `committing flow ${flow.flow}'s checkpoint`, committed);
    if (committed.outcome !== "committed" && committed.outcome !== "already-committed")
      throw new TypeError(
        `publish: flow ${flow.flow}'s checkpoint could not take HEAD (${committed.outcome})`,
      );
  }
}
