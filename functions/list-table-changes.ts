import { ROUTES } from "../shared/api/route-contracts.ts";
import { tableNameParam } from "../shared/api/resource-names.ts";
import { tableChanges } from "../shared/control/tables/table-reads.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/tables/{full_name}/changes?starting_version=&ending_version=`: table_changes rows, paged. */
export const handler = apiRoute(ROUTES.listTableChanges, ({ path, query }, plane) =>
  tableChanges(plane.bucket, tableNameParam(path["full_name"]), query),
);
