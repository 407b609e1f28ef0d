import { ROUTES } from "../shared/api/route-contracts.ts";
import { statementIdParam } from "../shared/api/resource-names.ts";
import { cancelStatement } from "../shared/control/statements/statement-answers.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/sql/statements/{statement_id}/cancel` → `{}` (every statement is done when answered). */
export const handler = apiRoute(ROUTES.cancelStatement, ({ path }, plane) =>
  cancelStatement(plane, statementIdParam(path["statement_id"])),
);
