import { emptyBody, listPipelinesQuery } from "../shared/api/request-schemas.ts";
import { listPipelines } from "../shared/control/pipeline-commands.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines` → `{statuses}`, newest first. */
export const handler = apiRoute({ body: emptyBody, query: listPipelinesQuery }, ({ query }, plane) =>
  listPipelines(plane, query.max_results),
);
