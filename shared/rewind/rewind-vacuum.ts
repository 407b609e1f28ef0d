import { DeltaTable, type Snapshot, type VacuumPlan, type VacuumRequest } from "../delta/index.ts";
import { vacuumFlowState } from "../state/index.ts";
import { stateFilesOf } from "./checkpoint-offsets.ts";
import { viewStateAt } from "../engine/incremental-view.ts";
import { viewStateFlowId } from "../engine/materialized-view.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import { branchPipelineId } from "../store/bucket-layout.ts";
import { tableBranches, type TableBranch } from "./table-branches.ts";
import { branchTableStore } from "../store/branch-table-store.ts";
import { datasetOf, writersOf } from "./pipeline-datasets.ts";
import { flowRef, type RewindEnvironment } from "./rewind-environment.ts";
import type { RewindPoint } from "./rewind-point.ts";
import { listRewindPoints } from "./rewind-points.ts";
import { sweepSparkJobs } from "./spark-job-sweep.ts";

/**
 * VACUUM that respects rewind points (semantics.md "Rewind points"; architecture.md "VACUUM ... never
 * a file that a live rewind point still needs"):
 *
 * 1. The table versions the live points of the pipeline restore are passed to Delta's VACUUM plan as
 *    protected versions, so their files are kept whatever their age.
 * 2. The operator state of each flow writing the dataset: the state files of its HEAD checkpoint and
 *    of the checkpoint every live point names for it are kept (with every file their manifests
 *    list); the rest of the flow's state folder older than the same retention is deleted.
 * 3. A materialized view's incremental state the same way: the state versions that its table's
 *    latest version and each protected version continue from (the refresh commits name them) are
 *    kept, the rest of its state folder older than the retention is deleted.
 *
 * 4. Branches (docs/branches.md "VACUUM"): every file the latest snapshot of a branch's log of the
 *    table names is kept (a branch begins with the point's files, which live may have removed since),
 *    and so is the state of each branch flow's HEAD, which shares live's state files, and of each
 *    branch of a materialized view the incremental state its latest snapshot continues from. A branch is
 *    found by its log in the table's folder, so once discarded, its files go as any other.
 *
 * 5. The Spark jobs of each flow writing the dataset (spark-job-sweep.ts): a settled batch's request,
 *    manifest and staging at once, any other past the retention. No commit references them.
 *
 * So a rewind to any live point inside retention, and a branch's read or publish, cannot fail because
 * of a vacuum.
 */

/** The versions of `dataset` that live rewind points restore, ascending (points of this table only). */
export async function protectedVersions(env: RewindEnvironment, dataset: string): Promise<number[]> {
  return versionsOf(await listRewindPoints(env), dataset);
}

function versionsOf(points: readonly RewindPoint[], dataset: string): number[] {
  const versions = new Set<number>();
  for (const point of points) {
    const at = point.cut.datasets.get(dataset);
    if (at) versions.add(at.version);
  }
  return [...versions].sort((a, b) => a - b);
}

/** The state keys flow `flow` still needs: its HEAD's, and those of each live point's checkpoint. */
async function liveStateKeys(
  env: RewindEnvironment,
  flow: string,
  points: readonly RewindPoint[],
): Promise<string[]> {
  const ref = flowRef(env, flow);
  const keys = stateFilesOf((await env.checkpoints.head(ref)).checkpoint);
  const seqs = new Set(points.map((point) => point.cut.flows.get(flow)).filter((seq) => seq !== undefined));
  for (const seq of seqs) keys.push(...stateFilesOf(await env.checkpoints.get(ref, seq)));
  return keys;
}

/** Step 4: the state keys of flow `flow`'s HEAD on each branch (`<pipelineId>~<branch>`). */
async function branchStateKeys(env: RewindEnvironment, flow: string, branches: readonly string[]) {
  const keys: string[] = [];
  for (const branch of branches) {
    const ref = { pipelineId: branchPipelineId(env.pipelineId, branch), flowId: flow };
    keys.push(...stateFilesOf((await env.checkpoints.head(ref)).checkpoint));
  }
  return keys;
}

/** Step 3: the state versions a materialized view's table at `versions` continues from. */
async function liveViewStateKeys(store: ObjectStore, versions: readonly number[]): Promise<string[]> {
  const keys = new Set<string>();
  for (const version of new Set(versions)) {
    const key = await viewStateAt(store, version);
    if (key) keys.add(key);
  }
  return [...keys];
}

/**
 * Step 4 for a materialized view: the state each branch's latest snapshot continues from. A branch
 * still at its CLONE is live's version it began from (a publish restores "to" it, and the next refresh
 * continues from that version's state); a branch written since, its own latest commit's.
 */
async function branchViewStateKeys(store: ObjectStore, branches: readonly TableBranch[]): Promise<string[]> {
  const keys: string[] = [];
  for (const { name, snapshot } of branches) {
    if (!snapshot) continue;
    const parameters = snapshot.commitInfo?.operationParameters ?? {};
    const source = parameters["sourceVersion"];
    const key =
      snapshot.commitInfo?.operation === "CLONE" && typeof source === "number"
        ? await viewStateAt(store, source)
        : await viewStateAt(branchTableStore(store, name), snapshot.version);
    if (key) keys.push(key);
  }
  return keys;
}

/** VACUUM of a dataset's table and its flows' (or view's) state, keeping every live point's files (a dry run deletes nothing). */
export async function vacuumDataset(
  env: RewindEnvironment,
  dataset: string,
  request: Omit<VacuumRequest, "protectedVersions"> = {},
): Promise<
  VacuumPlan & {
    readonly deleted: boolean;
    readonly protectedVersions: readonly number[];
    /** The branches whose files were kept (step 4). */
    readonly protectedBranches: readonly string[];
    /** The state files deleted (or, in a dry run, to delete): of the flows writing the dataset, or of the view. */
    readonly stateFilesToDelete: readonly string[];
  }
> {
  const points = await listRewindPoints(env);
  const versions = versionsOf(points, dataset);
  const found = await tableBranches(env.tableStore(dataset));
  const branches = found.map((branch) => branch.name);
  const branchSnapshots = found.flatMap((branch): Snapshot[] => (branch.snapshot ? [branch.snapshot] : []));
  const table = await DeltaTable.open(env.tableStore(dataset), { clock: env.clock });
  let plan: VacuumPlan & { readonly deleted: boolean };
  let live: number[];
  const latest = table.snapshot.version;
  try {
    // A point whose version the log no longer holds cannot be restored anyway; VACUUM cannot load it.
    live = versions.filter((v) => v <= latest);
    plan = await table.vacuum({ ...request, protectedVersions: live, protectedSnapshots: branchSnapshots });
  } finally {
    await table.close();
  }
  const stateFiles: string[] = [];
  for (const flow of writersOf(env.pipeline, dataset)) {
    const state = await vacuumFlowState({
      store: env.stateStore,
      flow: flowRef(env, flow.name),
      liveKeys: [
        ...(await liveStateKeys(env, flow.name, points)),
        ...(await branchStateKeys(env, flow.name, branches)),
      ],
      now: env.clock(),
      retentionMs: plan.retentionMs,
      ...(request.dryRun ? { dryRun: true } : {}),
    });
    stateFiles.push(...state.delete);
    stateFiles.push(
      ...(await sweepSparkJobs(env, flow.name, branches, {
        now: env.clock(),
        retentionMs: plan.retentionMs,
        ...(request.dryRun ? { dryRun: true } : {}),
      })),
    );
  }
  if (datasetOf(env.pipeline, dataset)?.type === "materialized_view") {
    const state = await vacuumFlowState({
      store: env.stateStore,
      flow: { pipelineId: env.pipelineId, flowId: viewStateFlowId(dataset) },
      liveKeys: [
        ...(await liveViewStateKeys(env.tableStore(dataset), [latest, ...live])),
        ...(await branchViewStateKeys(env.tableStore(dataset), found)),
      ],
      now: env.clock(),
      retentionMs: plan.retentionMs,
      ...(request.dryRun ? { dryRun: true } : {}),
    });
    stateFiles.push(...state.delete);
  }
  return { ...plan, protectedVersions: live, protectedBranches: branches, stateFilesToDelete: stateFiles };
}
