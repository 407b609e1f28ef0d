import type { VacuumTableBody } from "../../api/request-schemas.ts";
import type { TableName } from "../../api/resource-names.ts";
import { DeltaTable, RetentionTooShortError } from "../../delta/index.ts";
import { InvalidParameterError } from "../../errors/coded-error.ts";
import { vacuumDataset } from "../../rewind/rewind-vacuum.ts";
import { loadPipeline, rewindEnvironment, type ControlPlane } from "../plane/control-plane.ts";
import { readingTable, tableStore } from "./table-access.ts";

/**
 * `POST /api/2.0/tables/{full_name}/vacuum` (api.md): VACUUM of a table by its name. A pipeline's
 * table keeps every file its pipeline's live rewind points restore, whatever the retention asked
 * for, and so does the state of the flows writing it, so no VACUUM a user can run breaks a live
 * point; a table no pipeline owns has no points.
 */
export async function vacuumTable(plane: ControlPlane, name: TableName, body: VacuumTableBody) {
  const display = `${name.catalog}.${name.schema}.${name.table}`;
  const request = {
    ...(body.retain_hours !== undefined ? { retentionHours: body.retain_hours } : {}),
    allowShortRetention: body.allow_short_retention,
    dryRun: body.dry_run,
  };
  const owner = await plane.pipelines.tableOwner(display);
  const result = await vacuuming(display, () =>
    readingTable(name, async () => {
      if (owner !== undefined) {
        const { pipeline } = await loadPipeline(plane, owner);
        return vacuumDataset(rewindEnvironment(plane, owner, pipeline), name.table, request);
      }
      const table = await DeltaTable.open(tableStore(plane.bucket, name), { clock: plane.clock });
      try {
        return {
          ...(await table.vacuum(request)),
          protectedVersions: [] as number[],
          protectedBranches: [] as string[],
          stateFilesToDelete: [] as string[],
        };
      } finally {
        await table.close();
      }
    }),
  );
  return {
    table: display,
    ...(owner !== undefined ? { pipeline_id: owner } : {}),
    dry_run: body.dry_run,
    retention_hours: result.retentionMs / 3_600_000,
    protected_versions: result.protectedVersions,
    ...(result.protectedBranches.length > 0 ? { protected_branches: [...result.protectedBranches] } : {}),
    files_protected: result.filesProtected,
    files_within_retention: result.filesWithinRetention,
    files: result.filesToDelete.map((file) => ({ path: file.key, size: file.size })),
    /** Keys of the bucket: operator and source state of the table's flows (or a materialized view's incremental state) that no live point needs. */
    state_files: result.stateFilesToDelete,
    ...(owner === undefined
      ? {
          notice: `no pipeline owns ${display}, so it has no rewind points to protect: only the retention kept files`,
        }
      : {}),
  };
}

/** A retention shorter than the table's own, not allowed: the user's to fix. */
async function vacuuming<T>(display: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof RetentionTooShortError)) throw error;
    throw new InvalidParameterError(
      `table ${display}: ${error.message.replace(/pass allowShortRetention: true/, "send allow_short_retention: true (ebb table vacuum --allow-short-retention)")}`,
      { cause: error },
    );
  }
}
