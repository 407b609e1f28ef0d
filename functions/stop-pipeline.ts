import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { stopPipeline } from "../shared/control/updates/stop-update.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/pipelines/{pipeline_id}/stop`: the running update is CANCELED. */
export const handler = apiRoute(ROUTES.stopPipeline, ({ path }, plane) =>
  stopPipeline(plane, pipelineIdParam(path["pipeline_id"])),
);
