import type { OptimizeTableBody } from "../../api/request-schemas.ts";
import type { TableName } from "../../api/resource-names.ts";
import { ResourceConflictError } from "../../api/errors.ts";
import { CommitConflictError, DeltaTable } from "../../delta/index.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { readingTable, tableStore } from "./table-access.ts";

/**
 * OPTIMIZE of a table of the bucket by its full name (api.md "Tables"): bin-packing compaction in a
 * `dataChange: false` commit. It may run beside an update: the commit is conflict-checked like any
 * other, and a write that removed one of its files meanwhile makes it fail with `RESOURCE_CONFLICT`
 * (run it again).
 */
export async function optimizeTable(bucket: ObjectStore, name: TableName, body: OptimizeTableBody) {
  return readingTable(name, async () => {
    const table = await DeltaTable.open(tableStore(bucket, name));
    try {
      const { plan, committed } = await table
        .optimize({
          ...(body.target_file_size_bytes !== undefined
            ? { targetFileSizeBytes: body.target_file_size_bytes }
            : {}),
          dryRun: body.dry_run,
        })
        .catch((error: unknown) => {
          if (!(error instanceof CommitConflictError)) throw error;
          throw new ResourceConflictError(
            `table ${name.catalog}.${name.schema}.${name.table} changed while OPTIMIZE ran (${error.message}); nothing was committed: run OPTIMIZE again`,
            { cause: error },
          );
        });
      const removed = plan.bins.flatMap((bin) => bin.files);
      return {
        read_version: plan.version,
        dry_run: body.dry_run,
        target_file_size_bytes: plan.targetFileSizeBytes,
        ...(committed ? { version: committed.version } : {}),
        metrics: {
          num_bins: plan.bins.length,
          num_files_removed: removed.length,
          num_bytes_removed: removed.reduce((sum, file) => sum + file.size, 0),
          num_files_skipped: plan.filesSkipped,
          ...(committed ? { num_files_added: committed.operationMetrics["numAddedFiles"] ?? 0 } : {}),
          ...(committed ? { num_bytes_added: committed.operationMetrics["numAddedBytes"] ?? 0 } : {}),
        },
      };
    } finally {
      await table.close();
    }
  });
}
