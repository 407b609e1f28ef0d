import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { getBranch } from "../shared/control/branches/branch-views.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/branches/{branch_name}`. */
export const handler = apiRoute(ROUTES.getBranch, ({ path }, plane) =>
  getBranch(plane, pipelineIdParam(path["pipeline_id"]), path["branch_name"] ?? ""),
);
