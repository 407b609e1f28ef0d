import { editPipelineBody, noQuery } from "../shared/api/request-schemas.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { editPipeline } from "../shared/control/pipeline-commands.ts";
import { apiRoute } from "./http/api-route.ts";

/** `PUT /api/2.0/pipelines/{pipeline_id}`: a new definition version ("deploy a fix"). */
export const handler = apiRoute({ body: editPipelineBody, query: noQuery }, ({ path, body }, plane) =>
  editPipeline(plane, pipelineIdParam(path["pipeline_id"]), body),
);
