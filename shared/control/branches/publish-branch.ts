import { randomUUID } from "node:crypto";
import { executeRestore, planRestore, type Snapshot } from "../../delta/index.ts";
import { flowRef, tableWriteFence } from "../../rewind/rewind-environment.ts";
import { appendEvent } from "../../rewind/rewind-events.ts";
import { captureRewindPoint } from "../../rewind/rewind-points.ts";
import { resetTable } from "../../rewind/dataset-reset.ts";
import { tableDatasets, writersOf } from "../../rewind/pipeline-datasets.ts";
import { assertBegun } from "../../rewind/update-guard.ts";
import { withTableSnapshots } from "../../rewind/table-snapshots.ts";
import { branchSnapshot } from "../../rewind/table-branches.ts";
import { branchPipelineId } from "../../store/bucket-layout.ts";
import { flowAppId, ROOT_SEQ } from "../../store/checkpoints-repository.ts";
import { rewindEnvironment, type ControlPlane } from "../plane/control-plane.ts";
import { openBranch } from "./branch-views.ts";
import { BranchOutOfDateError } from "./errors.ts";

/**
 * `POST …/branches/{name}/publish` (docs/branches.md "Publish"): live becomes the branch.
 *
 * 1. The pipeline is held as by an update (`PIPELINE_BUSY` while one runs; none starts meanwhile),
 *    and every table of live must still be at the version it had when the branch was made
 *    (`BRANCH_OUT_OF_DATE` otherwise: the branch never saw those writes).
 * 2. A rewind point is captured first, so the publish is undone by rewinding to it.
 * 3. Upstream first, per table: each writing flow's branch HEAD is planned as a new live checkpoint,
 *    then one RESTORE commit of live makes its files, metadata and txns the branch's latest snapshot
 *    (metadata only: the branch's files are in the table's folder already), its txns renamed to live's
 *    app ids at the new seqs; then the checkpoints take HEAD. A table the branch has no log of is
 *    truncated.
 * 4. One `branch_published` event names each table's branch and live versions; the pipeline is released.
 */
export async function publishBranch(plane: ControlPlane, pipelineId: string, name: string) {
  const { record, pipeline, tables } = await openBranch(plane, pipelineId, name);
  const env = rewindEnvironment(plane, pipelineId, pipeline);
  const publishId = `publish-${randomUUID()}`;
  assertBegun(await plane.pipelines.beginUpdate(pipelineId, publishId, "RUNNING", { restoresTables: true }));
  let ended = false;
  try {
    const fence = tableWriteFence(env, publishId);
    const result = await withTableSnapshots(env.tableStore, async (snapshots) => {
      const moved = [];
      for (const table of record.tables) {
        const now = (await snapshots.latest(table.dataset))?.version ?? null;
        if (table.liveVersion === undefined || now !== table.liveVersion)
          moved.push({ table: table.identifier, from: table.liveVersion ?? null, now });
      }
      if (moved.length > 0) throw new BranchOutOfDateError(record.name, moved);
      const point = await captureRewindPoint(env);
      const published = [];
      for (const dataset of tableDatasets(pipeline)) {
        const identifier = record.tables.find((t) => t.dataset === dataset)?.identifier ?? dataset;
        const store = tables.live(dataset);
        const branch = await branchSnapshot(store, record.name);
        const flows = await planCheckpoints(plane, pipelineId, record.name, writersOf(pipeline, dataset));
        let liveVersion: number | null;
        if (!branch) {
          const reset = await resetTable(store, { how: "TRUNCATE" }, plane.clock, () =>
            fence(`emptying ${identifier}`),
          );
          liveVersion = reset.version ?? (await snapshots.latest(dataset))?.version ?? null;
        } else {
          const current = await snapshots.latest(dataset);
          const txns = new Map(
            flows
              .filter((f) => f.liveSeq !== ROOT_SEQ)
              .map((f) => {
                const appId = flowAppId({ pipelineId, flowId: f.flow });
                return [appId, { appId, version: f.liveSeq, lastUpdated: plane.clock() }] as const;
              }),
          );
          const target: Snapshot = { ...branch, txns };
          if (!current) throw new TypeError(`table ${identifier} has a branch log but no live log`);
          const plan = planRestore(current, target, plane.clock());
          const committed = await executeRestore(store, current, plan, {
            clock: plane.clock,
            extraParameters: { branch: record.name, publishId },
            beforeCommit: () => fence(`the publish of branch ${record.name} to ${identifier}`),
          });
          liveVersion = committed.version;
        }
        await commitCheckpoints(plane, pipelineId, flows, liveVersion ?? 0);
        published.push({
          table: identifier,
          branch_version: branch?.version ?? null,
          live_version: liveVersion,
          flows: flows.map((f) => ({ flow: f.flow, branch_seq: f.branchSeq, live_seq: f.liveSeq })),
        });
      }
      return { point, published };
    });
    await appendEvent(env, {
      event_type: "branch_published",
      level: "INFO",
      message: `Published branch ${record.name}: ${result.published.map((t) => `${t.table} at version ${t.live_version ?? "none"}`).join(", ")}${result.point ? ` (undo: rewind to point ${result.point.rewindPointId})` : ""}`,
      updateId: publishId,
      details: {
        branch_published: {
          branch: record.name,
          rewind_point_id: result.point?.rewindPointId ?? null,
          tables: result.published,
        },
      },
      timestamp: plane.clock(),
      retentionMs: pipeline.settings.rewindRetentionMs,
    });
    await plane.pipelines.endUpdate(pipelineId, publishId, "IDLE");
    ended = true;
    return {
      branch: record.name,
      rewind_point_id: result.point?.rewindPointId ?? null,
      tables: result.published,
    };
  } finally {
    if (!ended) await plane.pipelines.endUpdate(pipelineId, publishId, "IDLE");
  }
}

interface PlannedCheckpoint {
  readonly flow: string;
  readonly branchSeq: number;
  /** The new live checkpoint's seq (ROOT_SEQ: the branch's flow is at the root, so live's goes there). */
  readonly liveSeq: number;
  readonly stateVersion?: string;
}

/** Each flow's branch HEAD, planned as live's next checkpoint (offsets and state shared). */
async function planCheckpoints(
  plane: ControlPlane,
  pipelineId: string,
  branch: string,
  flows: readonly { readonly name: string }[],
): Promise<PlannedCheckpoint[]> {
  const planned: PlannedCheckpoint[] = [];
  for (const { name: flow } of flows) {
    const head = await plane.checkpoints.head({
      pipelineId: branchPipelineId(pipelineId, branch),
      flowId: flow,
    });
    if (head.seq === ROOT_SEQ || !head.checkpoint) {
      planned.push({ flow, branchSeq: ROOT_SEQ, liveSeq: ROOT_SEQ });
      continue;
    }
    const ref = flowRef({ pipelineId }, flow);
    const copy = await plane.checkpoints.plan(ref, {
      parent: (await plane.checkpoints.head(ref)).seq,
      offsets: head.checkpoint.offsets,
      ...(head.checkpoint.stateRef !== undefined ? { stateRef: head.checkpoint.stateRef } : {}),
    });
    if (copy.outcome !== "planned")
      throw new TypeError(`publish of ${branch}: flow ${flow}'s checkpoint lost its seq to another planner`);
    planned.push({
      flow,
      branchSeq: head.seq,
      liveSeq: copy.checkpoint.seq,
      ...(head.checkpoint.stateVersion !== undefined ? { stateVersion: head.checkpoint.stateVersion } : {}),
    });
  }
  return planned;
}

async function commitCheckpoints(
  plane: ControlPlane,
  pipelineId: string,
  flows: readonly PlannedCheckpoint[],
  tableVersion: number,
) {
  for (const flow of flows) {
    const ref = flowRef({ pipelineId }, flow.flow);
    if (flow.liveSeq === ROOT_SEQ) {
      await plane.checkpoints.moveHead(ref, ROOT_SEQ);
      continue;
    }
    const committed = await plane.checkpoints.commit(ref, flow.liveSeq, {
      tableVersion,
      committedAt: plane.clock(),
      ...(flow.stateVersion !== undefined ? { stateVersion: flow.stateVersion } : {}),
    });
    if (committed.outcome !== "committed" && committed.outcome !== "already-committed")
      throw new TypeError(
        `publish: flow ${flow.flow}'s checkpoint could not take HEAD (${committed.outcome})`,
      );
  }
}
