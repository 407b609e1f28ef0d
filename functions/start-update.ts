import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { startUpdateOrBranch } from "../shared/control/branches/branch-request.ts";
import { apiRoute } from "./http/api-route.ts";

/**
 * `POST /api/2.0/pipelines/{pipeline_id}/updates` → `{update_id}`, or `{branch}` for a `rewind_spec.branch`
 * (docs/branches.md); every check runs before anything starts.
 */
export const handler = apiRoute(ROUTES.startUpdate, ({ path, body }, plane) =>
  startUpdateOrBranch(plane, pipelineIdParam(path["pipeline_id"]), body),
);
