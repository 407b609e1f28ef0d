import { ROUTES } from "../shared/api/route-contracts.ts";
import { executeStatement } from "../shared/control/statements/sql-statements.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/sql/statements` `{statement, …}`: a Databricks SQL query → a `StatementResponse`. */
export const handler = apiRoute(ROUTES.executeStatement, ({ body }, plane) => executeStatement(plane, body));
