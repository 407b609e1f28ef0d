import { ROUTES } from "../shared/api/route-contracts.ts";
import { startOrderedRun } from "../shared/control/runs/ordered-run.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/ebb/runs`: several pipelines run upstreams first; each run starts the next as it completes. */
export const handler = apiRoute(ROUTES.startOrderedRun, ({ body }, plane) => startOrderedRun(plane, body));
