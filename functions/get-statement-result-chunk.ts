import { ROUTES } from "../shared/api/route-contracts.ts";
import { chunkIndexParam, statementIdParam } from "../shared/api/resource-names.ts";
import { getStatementResultChunk } from "../shared/control/statements/statement-answers.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/sql/statements/{statement_id}/result/chunks/{chunk_index}` → that chunk's `ResultData`. */
export const handler = apiRoute(ROUTES.getStatementResultChunk, ({ path }, plane) =>
  getStatementResultChunk(
    plane,
    statementIdParam(path["statement_id"]),
    chunkIndexParam(path["chunk_index"]),
  ),
);
