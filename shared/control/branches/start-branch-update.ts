import type { StartUpdateBody } from "../../api/request-schemas.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import { branchPipelineId } from "../../store/bucket-layout.ts";
import { refreshFieldsOf } from "../updates/update-intent.ts";
import { startUpdate } from "../updates/start-update.ts";
import { loadPipeline, requirePipeline, type ControlPlane } from "../plane/control-plane.ts";
import { readBranchRecord } from "./branch-record.ts";
import { branchPlane } from "./branch-plane.ts";

/** The refresh fields a run on a branch takes: a selection of what runs, no reset of the branch's tables. */
const BRANCH_REFRESH_FIELDS: ReadonlySet<string> = new Set(["refresh_selection", "selection"]);

/**
 * `POST …/updates` with `"branch"` (docs/branches.md "Replay on a branch"): a run of the pipeline's
 * current definition on the branch, started as live's are (start-update.ts, every check the same) but
 * with the branch's plane (branch-plane.ts): its own busy lock, checkpoints, state and table logs. A
 * live update may run meanwhile; a second update on the branch is `PIPELINE_BUSY`.
 *
 * Refused (`INVALID_PARAMETER_VALUE`, naming the field): `rewind_spec` (with `branch` inside it, that
 * makes a branch), the resets of a full refresh (make the branch at an earlier point instead), and an
 * `engine` other than DuckDB: Spark reads and writes the table folders by their paths, where the
 * branch's logs are not. A run on a branch runs on DuckDB whatever `pipelines.engine` says.
 */
export async function startBranchUpdate(plane: ControlPlane, pipelineId: string, body: StartUpdateBody) {
  const branch = body.branch!;
  const refused = [
    ...(body.rewind_spec !== undefined ? ["rewind_spec"] : []),
    ...Object.keys(refreshFieldsOf(body)).filter(
      (field) =>
        !BRANCH_REFRESH_FIELDS.has(field) && !(field === "refresh" && body.refresh === "INCREMENTAL"),
    ),
    ...(body.engine !== undefined && body.engine !== "duckdb" ? ["engine"] : []),
  ];
  if (refused.length > 0) {
    throw new InvalidParameterError(
      `branch cannot be combined with ${refused.join(", ")}: an update on branch "${branch}" runs the current definition on the branch as it is (refresh_selection, or selection with refresh INCREMENTAL, may choose what runs, on DuckDB). To make a branch send rewind_spec.branch; to start the branch from an earlier point, discard it and make it again there`,
    );
  }
  await requirePipeline(plane, pipelineId);
  await readBranchRecord(plane.bucket, pipelineId, branch);
  const { pipeline } = await loadPipeline(plane, pipelineId);
  const branchId = branchPipelineId(pipelineId, branch);
  await plane.pipelines.addBranch(branchId, `${pipeline.definition.name}~${branch}`);
  return startUpdate(branchPlane(plane, pipelineId, branch, pipeline), branchId, {
    ...body,
    engine: "duckdb",
  });
}
