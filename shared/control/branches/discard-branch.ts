import { branchRecordKey } from "../../store/bucket-layout.ts";
import { deleteBranchLog } from "../../rewind/table-branches.ts";
import { tableDatasets } from "../../rewind/pipeline-datasets.ts";
import type { ControlPlane } from "../plane/control-plane.ts";
import { openBranch } from "./branch-views.ts";

/**
 * `POST …/branches/{name}/discard` (docs/branches.md "Discard"): the record first, so the branch is
 * gone for every reader at once, then each table's branch log. The branch's own data files are then
 * named by no log, and the table's VACUUM removes them past its retention. The branch's checkpoint
 * items stay (a branch made again under the name moves their HEAD to its own copies).
 */
export async function discardBranch(plane: ControlPlane, pipelineId: string, name: string) {
  const { record, pipeline, tables } = await openBranch(plane, pipelineId, name);
  await plane.bucket.delete(branchRecordKey(pipelineId, record.name));
  const datasets = new Set([...record.tables.map((t) => t.dataset), ...tableDatasets(pipeline)]);
  for (const dataset of datasets) await deleteBranchLog(tables.live(dataset), record.name);
  return {};
}
