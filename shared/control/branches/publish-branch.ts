import { captureRewindPoint } from "../../rewind/rewind-points.ts";
import { allFlows, qualifiedName, tableDatasets } from "../../rewind/pipeline-datasets.ts";
import { assertBegun, checkUpdateAllowed } from "../../rewind/update-guard.ts";
import { withTableSnapshots, type TableSnapshots } from "../../rewind/table-snapshots.ts";
import { branchSnapshot } from "../../rewind/table-branches.ts";
import type { ValidatedPipeline } from "../../pipeline/validate-pipeline.ts";
import { rewindEnvironment, type ControlPlane } from "../plane/control-plane.ts";
import { publishOnce } from "../plane/lifecycle-events.ts";
import { updateStarted } from "../updates/lifecycle-event-builders.ts";
import { releaseStaleUpdate } from "../updates/stale-update.ts";
import { launch } from "../updates/start-update.ts";
import { recorder } from "../updates/update-events.ts";
import type { UpdateIntent } from "../updates/update-intent.ts";
import { openBranch } from "./branch-views.ts";
import { branchPipelineId } from "../../store/bucket-layout.ts";
import { offsetsOnLive } from "./branch-offsets.ts";
import { BranchOutOfDateError, BranchReaderBehindError } from "./errors.ts";
import {
  publishedTables,
  recordPublishPlan,
  type PublishedTablePlan,
  type PublishPlan,
} from "./publish-plan-record.ts";

/**
 * `POST …/branches/{name}/publish` (docs/branches.md "Publish"): starts an update that makes live the
 * branch. Every check runs here, so a refused publish starts nothing; the work is the update's
 * (updates/steps/publish-execution.ts, on the state machine's rewind branch), so a crash part-way is retried and
 * resumed, not left half done.
 *
 * 1. The pipeline may start an update (`PIPELINE_BUSY` while one runs; a publish is a rewind for the
 *    rewind block: it may run after a rewind that failed part-way), and every table of live is still
 *    at the version it had when the branch was made (`BRANCH_OUT_OF_DATE` otherwise: the branch never
 *    saw those writes), and every branch flow that streams from one of the pipeline's tables has read
 *    its branch log to the end (`BRANCH_READER_BEHIND` otherwise: live has no version for the rest).
 * 2. The update is recorded (intent `publish`, naming the branch) and takes the pipeline as any update
 *    does; a lost race is `PIPELINE_BUSY` and leaves no update.
 * 3. With the pipeline held, a rewind point is captured (rewinding to it undoes the publish) and the
 *    plan recorded: per table, upstream first, the live version it must still be at and the branch's.
 * 4. The execution starts, and "Update Started" (update_kind PUBLISH) goes out. No flow runs.
 */
export async function publishBranch(plane: ControlPlane, pipelineId: string, name: string) {
  const { record, pipeline, tables } = await openBranch(plane, pipelineId, name);
  const pipelineRecord = await releaseStaleUpdate(plane, (await plane.pipelines.get(pipelineId))!);
  checkUpdateAllowed(pipelineRecord, pipeline.settings, "rewind");
  const env = rewindEnvironment(plane, pipelineId, pipeline);
  const planned = await withTableSnapshots(env.tableStore, async (snapshots) => {
    const moved = [];
    for (const table of record.tables) {
      const now = (await snapshots.latest(table.dataset))?.version ?? null;
      if (table.liveVersion === undefined || now !== table.liveVersion)
        moved.push({ table: table.identifier, from: table.liveVersion ?? null, now });
    }
    if (moved.length > 0) throw new BranchOutOfDateError(record.name, moved);
    const planned: PublishPlan["tables"][number][] = [];
    for (const dataset of tableDatasets(pipeline)) {
      const table = record.tables.find((t) => t.dataset === dataset);
      const branch = await branchSnapshot(tables.live(dataset), record.name);
      planned.push({
        dataset,
        identifier: table?.identifier ?? dataset,
        liveVersion: table?.liveVersion ?? (await snapshots.latest(dataset))?.version ?? null,
        branchVersion: branch?.version ?? null,
        sourceVersion: table?.sourceVersion ?? null,
      });
    }
    const behind = await readersBehind(plane, pipelineId, pipeline, record.name, planned, snapshots);
    if (behind.length > 0) throw new BranchReaderBehindError(record.name, behind);
    return planned;
  });

  const version = pipelineRecord.definitionVersion;
  const intent: UpdateIntent = { kind: "publish", branch: record.name };
  const request = { publish: { branch: record.name }, mode: "DEFAULT" };
  const update = await plane.updates.create({
    pipelineId,
    cause: "USER_ACTION",
    definitionVersion: version,
    request,
    intent,
    state: "QUEUED",
    executionArnOf: (updateId) => plane.executions.arnOf({ pipelineId, updateId }),
  });
  const begun = await plane.pipelines.beginUpdate(pipelineId, update.updateId, "STARTING", {
    restoresTables: true,
  });
  if (begun.outcome === "pipeline-busy") {
    if (!(await plane.updates.discard(pipelineId, update.updateId)))
      await plane.updates.transition(pipelineId, update.updateId, "CANCELED", {
        error: { errorCode: "PIPELINE_BUSY", message: `update ${begun.activeUpdateId} started first` },
      });
  }
  assertBegun(begun);
  // Held now: nothing writes live between the point and the publish.
  const point = await captureRewindPoint(env);
  const rewindPointId = point?.rewindPointId ?? null;
  await recordPublishPlan(plane.bucket, update, { branch: record.name, rewindPointId, tables: planned });
  const events = recorder(plane, update, pipeline.definition.name);
  await events.createUpdate({
    cause: "USER_ACTION",
    definition_version: version,
    request: { ...request, publish: { branch: record.name, rewind_point_id: rewindPointId } },
  });
  await launch(plane, update);
  await publishOnce(
    plane,
    updateStarted(
      { ...update, pipelineName: pipeline.definition.name, time: plane.clock() },
      { updateKind: "PUBLISH", cause: "USER_ACTION", definitionVersion: version },
    ),
  );
  return {
    branch: record.name,
    update_id: update.updateId,
    rewind_point_id: rewindPointId,
    tables: planned.map((t) => ({
      table: t.identifier,
      branch_version: t.branchVersion,
      live_version: t.liveVersion,
    })),
  };
}

/**
 * The branch flows that stream from one of the pipeline's tables and have not read its branch log to
 * the end (offsetsOnLive), or never ran while the branch wrote their upstream: the rows they have not
 * read are one RESTORE on live, which a stream skips.
 */
async function readersBehind(
  plane: ControlPlane,
  pipelineId: string,
  pipeline: ValidatedPipeline,
  branch: string,
  planned: readonly PublishedTablePlan[],
  snapshots: TableSnapshots,
) {
  const published = await publishedTables(snapshots, planned);
  const behind = [];
  for (const { flow, dataset } of allFlows(pipeline)) {
    const head = await plane.checkpoints.head({
      pipelineId: branchPipelineId(pipelineId, branch),
      flowId: flow.name,
    });
    const source = flow.source.type === "stream" ? flow.source.dataset : undefined;
    const never = !head.checkpoint && (planned.find((t) => t.dataset === source)?.branchVersion ?? 0) > 0;
    const read = head.checkpoint && offsetsOnLive(head.checkpoint.offsets, published);
    if (never || (read && "behind" in read))
      behind.push({ flow: flow.name, dataset, table: qualifiedName(pipeline, dataset) });
  }
  return behind;
}
