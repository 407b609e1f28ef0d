import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { diffBranch } from "../shared/control/branches/branch-views.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/branches/{branch_name}/diff`. */
export const handler = apiRoute(ROUTES.branchDiff, ({ path, query }, plane) =>
  diffBranch(plane, pipelineIdParam(path["pipeline_id"]), path["branch_name"] ?? "", query.max_samples),
);
