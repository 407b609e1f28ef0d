import { ROUTES } from "../shared/api/route-contracts.ts";
import { flowNameParam, pipelineIdParam } from "../shared/api/resource-names.ts";
import { readFlowState } from "../shared/control/flow-states/flow-state-reads.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines/{pipeline_id}/flows/{flow_name}/state?checkpoint_seq=|rewind_point_id=`: state rows, paged. */
export const handler = apiRoute(ROUTES.getFlowState, ({ path, query }, plane) =>
  readFlowState(plane, pipelineIdParam(path["pipeline_id"]), flowNameParam(path["flow_name"]), query),
);
