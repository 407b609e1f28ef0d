import { listAll } from "../../object-store/object-store.ts";
import { branchPipelineId, branchRecordKey, branchRecordsPrefix } from "../../store/bucket-layout.ts";
import { PipelineBusyError } from "../../rewind/errors.ts";
import { deleteBranchLog } from "../../rewind/table-branches.ts";
import { tableDatasets } from "../../rewind/pipeline-datasets.ts";
import type { ControlPlane } from "../plane/control-plane.ts";
import { openBranch } from "./branch-views.ts";

/**
 * `POST …/branches/{name}/discard` (docs/branches.md "Discard"): refused while an update runs on the
 * branch (its own pipeline item is deleted first, which holds it), then the record, so the branch is
 * gone for every reader at once, then each table's branch log. The branch's own data files are then
 * named by no log, and the table's VACUUM removes them past its retention. The branch's checkpoint
 * items stay (a branch made again under the name moves their HEAD to its own copies).
 */
export async function discardBranch(plane: ControlPlane, pipelineId: string, name: string) {
  const { record, pipeline, tables } = await openBranch(plane, pipelineId, name);
  // A branch never run has no item of its own (its first update makes it).
  const branchId = branchPipelineId(pipelineId, record.name);
  if (await plane.pipelines.get(branchId)) {
    const deleted = await plane.pipelines.delete(branchId, { keepTables: true });
    if (deleted.outcome === "pipeline-busy") throw new PipelineBusyError(deleted.activeUpdateId);
  }
  await plane.bucket.delete(branchRecordKey(pipelineId, record.name));
  const datasets = new Set([...record.tables.map((t) => t.dataset), ...tableDatasets(pipeline)]);
  for (const dataset of datasets) await deleteBranchLog(tables.live(dataset), record.name);
  return {};
}

/**
 * Every branch of the pipeline discarded (as `discardBranch`), for a pipeline being deleted: its
 * branches' pipeline items, records and logs are the pipeline's too, and a branch log left behind
 * would keep its files from every VACUUM. Refused with `PIPELINE_BUSY` while an update runs on a
 * branch (the branches before it are discarded; the pipeline is not deleted).
 */
export async function discardAllBranches(plane: ControlPlane, pipelineId: string) {
  const prefix = branchRecordsPrefix(pipelineId);
  const names: string[] = [];
  for await (const object of listAll(plane.bucket, prefix))
    names.push(object.key.slice(prefix.length).replace(/\.json$/, ""));
  for (const name of names) await discardBranch(plane, pipelineId, name);
}
