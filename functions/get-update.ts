import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam, updateIdParam } from "../shared/api/resource-names.ts";
import { getUpdate } from "../shared/control/updates/update-queries.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/updates/{update_id}` → `{update}` with per-flow progress. */
export const handler = apiRoute(ROUTES.getUpdate, ({ path }, plane) =>
  getUpdate(plane, pipelineIdParam(path["pipeline_id"]), updateIdParam(path["update_id"])),
);
