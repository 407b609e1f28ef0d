import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { listBranches } from "../shared/control/branches/branch-views.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/branches`: by name, paged. */
export const handler = apiRoute(ROUTES.listBranches, ({ path, query }, plane) =>
  listBranches(plane, pipelineIdParam(path["pipeline_id"]), query),
);
