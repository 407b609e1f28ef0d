import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { getPipeline } from "../shared/control/pipelines/pipeline-commands.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}`: settings, definition version, state, latest updates, rewind status. */
export const handler = apiRoute(ROUTES.getPipeline, ({ path }, plane) =>
  getPipeline(plane, pipelineIdParam(path["pipeline_id"])),
);
