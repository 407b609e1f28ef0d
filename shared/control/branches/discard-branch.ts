import { branchPipelineId, branchRecordKey } from "../../store/bucket-layout.ts";
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
