import { ROUTES } from "../shared/api/route-contracts.ts";
import { tableNameParam } from "../shared/api/resource-names.ts";
import { queryTable } from "../shared/control/tables/table-reads.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/tables/{full_name}/query` `{sql?, version?, timestamp?, limit?}`: a read as of a version or time. */
export const handler = apiRoute(ROUTES.queryTable, ({ path, body }, plane) =>
  queryTable(plane.bucket, tableNameParam(path["full_name"]), body),
);
