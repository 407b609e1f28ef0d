import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { deletePipeline } from "../shared/control/pipelines/pipeline-commands.ts";
import { apiRoute } from "./http/api-route.ts";

/** `DELETE /api/2.0/pipelines/{pipeline_id}[?purge=true]`: tables kept unless purged. */
export const handler = apiRoute(ROUTES.deletePipeline, ({ path, query }, plane) =>
  deletePipeline(plane, pipelineIdParam(path["pipeline_id"]), query.purge ?? false),
);
