import { createPipelineBody, noQuery } from "../shared/api/request-schemas.ts";
import { createPipeline } from "../shared/control/pipeline-commands.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/pipelines` → `{pipeline_id}`. */
export const handler = apiRoute({ body: createPipelineBody, query: noQuery }, ({ body }, plane) =>
  createPipeline(plane, body),
);
