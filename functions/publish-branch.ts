import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { publishBranch } from "../shared/control/branches/publish-branch.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/pipelines/{pipeline_id}/branches/{branch_name}/publish`. */
export const handler = apiRoute(ROUTES.publishBranch, ({ path }, plane) =>
  publishBranch(plane, pipelineIdParam(path["pipeline_id"]), path["branch_name"] ?? ""),
);
