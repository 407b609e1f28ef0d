import { ROUTES } from "../shared/api/route-contracts.ts";
import { tableNameParam } from "../shared/api/resource-names.ts";
import { vacuumTable } from "../shared/control/tables/table-vacuum.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/tables/{full_name}/vacuum` `{retain_hours?, allow_short_retention?, dry_run?}`: VACUUM keeping live rewind points' files. */
export const handler = apiRoute(ROUTES.vacuumTable, ({ path, body }, plane) =>
  vacuumTable(plane, tableNameParam(path["full_name"]), body),
);
