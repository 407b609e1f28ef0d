import { emptyBody, noQuery } from "../shared/api/request-schemas.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { listPoints } from "../shared/control/rewind-point-views.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/rewind-points`: live points, newest first. */
export const handler = apiRoute({ body: emptyBody, query: noQuery }, ({ path }, plane) =>
  listPoints(plane, pipelineIdParam(path["pipeline_id"])),
);
