import { ROUTES } from "../shared/api/route-contracts.ts";
import { rewindToCut } from "../shared/control/rewinds/cut-rewind.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/ebb/rewinds`: several pipelines to one cut; every plan is checked before any starts. */
export const handler = apiRoute(ROUTES.rewindToCut, ({ body }, plane) => rewindToCut(plane, body));
