import { noQuery, vacuumTableBody } from "../shared/api/request-schemas.ts";
import { tableNameParam } from "../shared/api/resource-names.ts";
import { vacuumTable } from "../shared/control/table-vacuum.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/tables/{full_name}/vacuum` `{retain_hours?, allow_short_retention?, dry_run?}`: VACUUM keeping live rewind points' files. */
export const handler = apiRoute({ body: vacuumTableBody, query: noQuery }, ({ path, body }, plane) =>
  vacuumTable(plane, tableNameParam(path["full_name"]), body),
);
