import { ROUTES } from "../shared/api/route-contracts.ts";
import { tableNameParam } from "../shared/api/resource-names.ts";
import { findOnset } from "../shared/control/rewind-points/onset-finder.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/tables/{full_name}/onset` `{predicate, change_types?}`: first bad version, the midpoint timestamp, the owning pipeline and its newest point before the onset. */
export const handler = apiRoute(ROUTES.findOnset, ({ path, body }, plane) =>
  findOnset(plane, tableNameParam(path["full_name"]), body),
);
