import type { StartUpdateBody } from "../../api/request-schemas.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import { planRewind } from "../../rewind/rewind-plan.ts";
import { parseRewindSpec } from "../../rewind/rewind-spec.ts";
import { refreshFieldsOf } from "../updates/update-intent.ts";
import { startUpdate } from "../updates/start-update.ts";
import {
  loadPipeline,
  requirePipeline,
  rewindEnvironment,
  type ControlPlane,
} from "../plane/control-plane.ts";
import { checkBranchName } from "./branch-record.ts";
import { startBranchUpdate } from "./start-branch-update.ts";
import { createBranch } from "./create-branch.ts";
import { branchInfo } from "./branch-views.ts";

/**
 * `POST …/updates`: a `rewind_spec` with `branch` makes a branch at the rewind's target
 * (docs/branches.md) and answers it; `branch` starts an update on a branch (start-branch-update.ts);
 * any other request starts an update (start-update.ts).
 *
 * The branch's request is checked as a rewind's (the same `planRewind`: point, retention, files,
 * checkpoints, `pipelines.rewind.enabled`), except that a running live update does not refuse it:
 * the branch reads live's past versions and writes nothing of live. A dry run answers the plan as a
 * rewind's dry run does, as an update.
 */
export async function startUpdateOrBranch(plane: ControlPlane, pipelineId: string, body: StartUpdateBody) {
  if (body.branch !== undefined) return startBranchUpdate(plane, pipelineId, body);
  const branch = branchOf(body.rewind_spec);
  if (branch === undefined) return startUpdate(plane, pipelineId, body);
  checkBranchName(branch);
  const spec = parseRewindSpec(body.rewind_spec, plane.clock());
  if (spec.dryRun) {
    throw new InvalidParameterError(
      `rewind_spec.branch cannot be combined with dry_run: a dry run of the rewind (without branch) checks the same point, and making a branch moves nothing of live`,
    );
  }
  const others = [...Object.keys(refreshFieldsOf(body)), ...(body.engine !== undefined ? ["engine"] : [])];
  if (others.length > 0 || body.validate_only) {
    throw new InvalidParameterError(
      `rewind_spec.branch cannot be combined with ${[...others, ...(body.validate_only ? ["validate_only"] : [])].join(", ")}: make the branch, then run it with {"branch": "${branch}"}`,
    );
  }
  await requirePipeline(plane, pipelineId);
  const { pipeline } = await loadPipeline(plane, pipelineId);
  const plan = await planRewind(rewindEnvironment(plane, pipelineId, pipeline), spec);
  return { branch: branchInfo(await createBranch(plane, pipelineId, pipeline, plan, branch)) };
}

function branchOf(rewindSpec: unknown): string | undefined {
  if (rewindSpec === null || typeof rewindSpec !== "object") return undefined;
  const branch = (rewindSpec as Record<string, unknown>)["branch"];
  if (branch === undefined) return undefined;
  if (typeof branch !== "string")
    throw new InvalidParameterError("rewind_spec.branch: must be a string (the branch's name)");
  return branch;
}
