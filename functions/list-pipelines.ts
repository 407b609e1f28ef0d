import { ROUTES } from "../shared/api/route-contracts.ts";
import { listPipelines } from "../shared/control/pipelines/pipeline-commands.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/pipelines?filter=&max_results=&page_token=` → `{statuses, next_page_token?}`, newest first. */
export const handler = apiRoute(ROUTES.listPipelines, ({ query }, plane) => listPipelines(plane, query));
