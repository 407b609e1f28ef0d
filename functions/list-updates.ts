import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { listUpdates } from "../shared/control/updates/update-queries.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/updates` → `{updates, next_page_token, prev_page_token}`, newest first. */
export const handler = apiRoute(ROUTES.listUpdates, ({ path, query }, plane) =>
  listUpdates(plane, pipelineIdParam(path["pipeline_id"]), query),
);
