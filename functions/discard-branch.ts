import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { discardBranch } from "../shared/control/branches/discard-branch.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/pipelines/{pipeline_id}/branches/{branch_name}/discard`. */
export const handler = apiRoute(ROUTES.discardBranch, ({ path }, plane) =>
  discardBranch(plane, pipelineIdParam(path["pipeline_id"]), path["branch_name"] ?? ""),
);
