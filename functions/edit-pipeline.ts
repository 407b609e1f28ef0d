import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { editPipeline } from "../shared/control/pipelines/pipeline-commands.ts";
import { apiRoute } from "./http/api-route.ts";

/** `PUT /api/2.0/pipelines/{pipeline_id}`: a new definition version ("deploy a fix"). */
export const handler = apiRoute(ROUTES.editPipeline, ({ path, body }, plane) =>
  editPipeline(plane, pipelineIdParam(path["pipeline_id"]), body),
);
