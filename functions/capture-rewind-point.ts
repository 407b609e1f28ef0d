import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { capturePoint } from "../shared/control/rewind-points/rewind-point-views.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/pipelines/{pipeline_id}/rewind-points`: capture one now. */
export const handler = apiRoute(ROUTES.captureRewindPoint, ({ path }, plane) =>
  capturePoint(plane, pipelineIdParam(path["pipeline_id"])),
);
