import { ROUTES } from "../shared/api/route-contracts.ts";
import { statementIdParam } from "../shared/api/resource-names.ts";
import { getStatement } from "../shared/control/statements/statement-answers.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/sql/statements/{statement_id}` → the statement's `StatementResponse` again. */
export const handler = apiRoute(ROUTES.getStatement, ({ path }, plane) =>
  getStatement(plane, statementIdParam(path["statement_id"])),
);
