import { ROUTES } from "../shared/api/route-contracts.ts";
import { pipelineIdParam } from "../shared/api/resource-names.ts";
import { listDatasets } from "../shared/control/tables/dataset-views.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/datasets`: versions, row counts, flows, upstreams. */
export const handler = apiRoute(ROUTES.listDatasets, ({ path }, plane) =>
  listDatasets(plane, pipelineIdParam(path["pipeline_id"])),
);
