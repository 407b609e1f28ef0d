import { ROUTES } from "../shared/api/route-contracts.ts";
import { tableNameParam } from "../shared/api/resource-names.ts";
import { optimizeTable } from "../shared/control/tables/table-optimize.ts";
import { apiRoute } from "./http/api-route.ts";

/** `POST /api/2.0/tables/{full_name}/optimize` `{target_file_size_bytes?, dry_run?}`: bin-packing compaction. */
export const handler = apiRoute(ROUTES.optimizeTable, ({ path, body }, plane) =>
  optimizeTable(plane.bucket, tableNameParam(path["full_name"]), body),
);
