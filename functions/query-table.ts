import { ROUTES } from "../shared/api/route-contracts.ts";
import { tableNameParam } from "../shared/api/resource-names.ts";
import { queryTable } from "../shared/control/tables/table-reads.ts";
import { tableSqlDialect } from "../shared/control/tables/table-sql-dialect.ts";
import { apiRoute } from "./http/api-route.ts";

/**
 * `POST /api/2.0/tables/{full_name}/query` `{sql?, version?, timestamp?, limit?}`: a read as of a version
 * or time, its SQL in the dialect of the table's pipeline.
 */
export const handler = apiRoute(ROUTES.queryTable, async ({ path, body }, plane) => {
  const name = tableNameParam(path["full_name"]);
  return queryTable(plane.bucket, name, body, (await tableSqlDialect(plane, name)).dialect);
});
