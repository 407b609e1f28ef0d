import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { startUpdate } from "../shared/control/updates/start-update.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/pipelines/{pipeline_id}/updates` → `{update_id}`; every check runs before anything starts. */
export const handler = apiRoute(ROUTES.startUpdate, ({ path, body }, plane) =>
  startUpdate(plane, pipelineIdParam(path["pipeline_id"]), body),
);
