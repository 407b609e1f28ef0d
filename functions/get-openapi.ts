import { openApiDocument } from "../shared/api/openapi-document.ts";
import { ROUTES } from "../shared/api/route-contracts.ts";
import { apiRoute } from "./http/api-route.ts";

/** `GET /api/2.0/openapi.json`: the API's OpenAPI 3.1 document, generated from the route contracts. */
const document = openApiDocument();

export const handler = apiRoute(ROUTES.getOpenApi, () => Promise.resolve(document));
