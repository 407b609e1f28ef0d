import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { listEvents } from "../shared/control/events/event-listing.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/events?filter=&order_by=&max_results=&page_token=`. */
export const handler = apiRoute(ROUTES.listEvents, ({ path, query }, plane) =>
  listEvents(plane, pipelineIdParam(path["pipeline_id"]), query),
);
