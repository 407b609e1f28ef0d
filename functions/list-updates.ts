import { emptyBody, listUpdatesQuery } from "../shared/api/request-schemas.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { listUpdates } from "../shared/control/update-queries.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/updates` → `{updates, next_page_token, prev_page_token}`, newest first. */
export const handler = apiRoute({ body: emptyBody, query: listUpdatesQuery }, ({ path, query }, plane) =>
  listUpdates(plane, pipelineIdParam(path["pipeline_id"]), query),
);
