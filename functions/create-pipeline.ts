import { ROUTES } from "../shared/api/route-contracts.ts";
import { createPipeline } from "../shared/control/pipelines/pipeline-commands.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/pipelines` → `{pipeline_id}`. */
export const handler = apiRoute(ROUTES.createPipeline, ({ body }, plane) => createPipeline(plane, body));
