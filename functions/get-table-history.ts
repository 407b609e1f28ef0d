import { ROUTES } from "../shared/api/route-contracts.ts";
import { tableNameParam } from "../shared/api/resource-names.ts";
import { tableHistory } from "../shared/control/tables/table-reads.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/tables/{full_name}/history`: DESCRIBE HISTORY, newest first. */
export const handler = apiRoute(ROUTES.getTableHistory, ({ path }, plane) =>
  tableHistory(plane.bucket, tableNameParam(path["full_name"])),
);
