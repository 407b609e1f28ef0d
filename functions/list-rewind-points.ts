import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { listPoints } from "../shared/control/rewind-points/rewind-point-views.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/rewind-points?max_results=&page_token=`: live points, newest first. */
export const handler = apiRoute(ROUTES.listRewindPoints, ({ path, query }, plane) =>
  listPoints(plane, pipelineIdParam(path["pipeline_id"]), query),
);
