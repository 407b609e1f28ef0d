import { executeShallowClone, type Snapshot } from "../../delta/index.ts";
import type { ValidatedPipeline } from "../../pipeline/validate-pipeline.ts";
import { allFlows, qualifiedName, tableDatasets } from "../../rewind/pipeline-datasets.ts";
import type { RewindPlan } from "../../rewind/rewind-plan.ts";
import { flowAppId, ROOT_SEQ, type FlowRef } from "../../store/checkpoints-repository.ts";
import { branchPipelineId, branchRecordKey } from "../../store/bucket-layout.ts";
import { withTableSnapshots } from "../../rewind/table-snapshots.ts";
import { deleteBranchLog } from "../../rewind/table-branches.ts";
import { rewindEnvironment, type ControlPlane } from "../plane/control-plane.ts";
import { branchTableStore } from "../../store/branch-table-store.ts";
import { BranchAlreadyExistsError } from "./errors.ts";
import { offsetsOnBranch } from "./branch-offsets.ts";
import { checkBranchName, encodeBranchRecord, type BranchRecord } from "./branch-record.ts";

/**
 * Creating a branch at a rewind point, from a rewind request's plan (docs/branches.md; every check of
 * the rewind already ran in `planRewind`). Nothing of live is written.
 *
 * 1. Each flow's branch checkpoint is planned: a copy of live's checkpoint at the point for a flow the
 *    rewind resets, of live's HEAD for one it leaves (its offsets and state references; the state
 *    files are immutable, so they are shared, not copied). A flow at the root stays at the root.
 * 2. Each table's branch log is made (one left by a creation that crashed before its record, an orphan
 *    no reader sees, is deleted first): a SHALLOW CLONE of live's table at the point's version (a
 *    rewound table), empty (a rewound table the point does not know), or at its latest version (a
 *    table the rewind leaves), its txns renamed to the branch's app ids at the copies' seqs.
 * 3. The copies are committed (HEAD moves to them), then the record is put if absent: a name taken
 *    meanwhile is `BRANCH_ALREADY_EXISTS`.
 */
export async function createBranch(
  plane: ControlPlane,
  pipelineId: string,
  pipeline: ValidatedPipeline,
  plan: RewindPlan,
  name: string,
): Promise<BranchRecord> {
  const branch = checkBranchName(name);
  const recordKey = branchRecordKey(pipelineId, branch);
  if (await plane.bucket.head(recordKey))
    throw new BranchAlreadyExistsError(pipeline.definition.name, branch);
  const env = rewindEnvironment(plane, pipelineId, pipeline);
  const branchId = branchPipelineId(pipelineId, branch);
  const rewound = new Map(plan.datasets.map((d) => [d.dataset, d]));
  const now = plane.clock();

  // Stream offsets into the pipeline's tables follow the branch log's numbering (branch-offsets.ts).
  const cloned = await clonedVersions(env, pipeline, rewound);

  // Step 1: which live checkpoint each flow copies, planned as the branch's next seq.
  const flows: { flow: string; dataset: string; liveSeq: number; branchSeq: number }[] = [];
  const planned = new Map<
    string,
    { ref: FlowRef; seq: number; stateVersion?: string; committedAt: number }
  >();
  for (const { flow, dataset } of allFlows(pipeline)) {
    const reset = rewound.get(dataset)?.flows.find((f) => f.flow === flow.name);
    const liveRef = { pipelineId, flowId: flow.name };
    const liveSeq = reset ? reset.targetSeq : (await plane.checkpoints.head(liveRef)).seq;
    const ref = { pipelineId: branchId, flowId: flow.name };
    const head = await plane.checkpoints.head(ref);
    if (liveSeq === ROOT_SEQ) {
      if (head.seq !== ROOT_SEQ) await plane.checkpoints.moveHead(ref, ROOT_SEQ);
      flows.push({ flow: flow.name, dataset, liveSeq, branchSeq: ROOT_SEQ });
      continue;
    }
    const live = await plane.checkpoints.get(liveRef, liveSeq);
    if (!live)
      throw new TypeError(`flow ${flow.name} has no checkpoint ${liveSeq}, which the rewind plan named`);
    const copy = await plane.checkpoints.plan(ref, {
      parent: head.seq,
      offsets: offsetsOnBranch(live.offsets, cloned),
      ...(live.stateRef !== undefined ? { stateRef: live.stateRef } : {}),
    });
    if (copy.outcome !== "planned")
      throw new TypeError(
        `branch ${branch}: flow ${flow.name}'s checkpoint copy lost its seq to another planner`,
      );
    flows.push({ flow: flow.name, dataset, liveSeq, branchSeq: copy.checkpoint.seq });
    planned.set(flow.name, {
      ref,
      seq: copy.checkpoint.seq,
      ...(live.stateVersion !== undefined ? { stateVersion: live.stateVersion } : {}),
      committedAt: live.committedAt ?? now,
    });
  }

  // Step 2: the branch's logs. A log there already is an orphan (a creation that crashed before its
  // record: the record was checked absent above), so it is replaced.
  for (const dataset of tableDatasets(pipeline)) await deleteBranchLog(env.tableStore(dataset), branch);
  const tables: BranchRecord["tables"] = [];
  const cloneTimes = new Map<string, number>();
  await withTableSnapshots(env.tableStore, async (snapshots) => {
    for (const dataset of tableDatasets(pipeline)) {
      const rewind = rewound.get(dataset);
      const latest = await snapshots.latest(dataset);
      let source: Snapshot | undefined;
      if (!rewind) source = latest;
      else if (rewind.action === "RESTORE") source = await snapshots.at(dataset, rewind.targetVersion!);
      else if (latest) source = { ...latest, files: new Map(), txns: new Map() };
      const identifier = qualifiedName(pipeline, dataset);
      const sourceVersion = rewind && rewind.action !== "RESTORE" ? null : (source?.version ?? null);
      tables.push({
        dataset,
        identifier,
        sourceVersion,
        liveVersion: latest?.version ?? null,
        from: rewind ? "POINT" : "LIVE",
      });
      if (!source) continue;
      const seqOf = new Map(
        flows.filter((f) => f.dataset === dataset).map((f) => [flowAppId({ pipelineId, flowId: f.flow }), f]),
      );
      // The txn versions are the branch's seqs too: a branch batch's seq follows its copy's, not live's.
      const txns = new Map(
        [...source.txns].map(([appId, txn]) => {
          const flow = seqOf.get(appId);
          return [
            appId,
            flow && flow.branchSeq !== ROOT_SEQ ? { ...txn, version: flow.branchSeq } : txn,
          ] as const;
        }),
      );
      const clone = branchTableStore(env.tableStore(dataset), branch);
      const committed = await executeShallowClone(
        clone,
        { ...source, txns },
        {
          clock: plane.clock,
          sourceName: identifier,
          // A writer's txn follows it to the branch at its copy's seq; a flow at the root has none.
          renameTxn: (appId) => {
            const flow = seqOf.get(appId);
            return flow && flow.branchSeq !== ROOT_SEQ
              ? flowAppId({ pipelineId: branchId, flowId: flow.flow })
              : undefined;
          },
        },
      );
      cloneTimes.set(dataset, committed.snapshot.timestamp);
    }
  });

  // Step 3: the copies take HEAD, then the record makes the branch visible.
  for (const { flow, dataset } of flows) {
    const copy = planned.get(flow);
    if (!copy) continue;
    const committed = await plane.checkpoints.commit(copy.ref, copy.seq, {
      tableVersion: 0,
      committedAt: cloneTimes.get(dataset) ?? copy.committedAt,
      ...(copy.stateVersion !== undefined ? { stateVersion: copy.stateVersion } : {}),
    });
    if (committed.outcome !== "committed" && committed.outcome !== "already-committed")
      throw new TypeError(
        `branch ${branch}: flow ${flow}'s checkpoint copy could not take HEAD (${committed.outcome})`,
      );
  }
  const record: BranchRecord = {
    name: branch,
    pipelineId,
    createdAt: now,
    rewindPointId: plan.resolved.rewindPointId ?? null,
    pointTime: plan.resolved.cut.time,
    tables,
    flows: flows.map(({ flow, liveSeq, branchSeq }) => ({ flow, liveSeq, branchSeq })),
  };
  const put = await plane.bucket.putIfAbsent(recordKey, encodeBranchRecord(record));
  if (put !== "created") throw new BranchAlreadyExistsError(pipeline.definition.name, branch);
  return record;
}

/** By table id, the live version each table's branch log clones (as step 2 picks it). */
async function clonedVersions(
  env: ReturnType<typeof rewindEnvironment>,
  pipeline: ValidatedPipeline,
  rewound: ReadonlyMap<string, RewindPlan["datasets"][number]>,
): Promise<Map<string, number>> {
  const cloned = new Map<string, number>();
  await withTableSnapshots(env.tableStore, async (snapshots) => {
    for (const dataset of tableDatasets(pipeline)) {
      const latest = await snapshots.latest(dataset);
      const rewind = rewound.get(dataset);
      if (!latest || (rewind && rewind.action !== "RESTORE")) continue;
      cloned.set(latest.metadata.id, rewind ? rewind.targetVersion! : latest.version);
    }
  });
  return cloned;
}
