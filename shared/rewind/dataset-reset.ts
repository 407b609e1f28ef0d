import { DeltaTable, TableNotFoundError } from "../delta/index.ts";
import { listAllKeys, type ObjectStore } from "../object-store/object-store.ts";
import { BRANCHES_FOLDER } from "../store/bucket-layout.ts";
import type { TableReset } from "./refresh-plan.ts";
import { keysNamedBy, tableBranches } from "./table-branches.ts";

/**
 * Resetting one table's contents (semantics.md "Refresh and reset", `reset_mode`). Each is
 * idempotent: a table already gone or already empty is left as it is.
 *
 * - DROP: delete every object under the table folder (log, history, data); the engine recreates the
 *   table, with a new id, on its next write, so a stream still reading the old one knows. A branch's
 *   log and the files it names stay (docs/branches.md "VACUUM"): the branch is not live's to drop.
 * - TRUNCATE: one commit (`operation: TRUNCATE`) removing every live file; identity, schema,
 *   properties and history stay.
 * - OWNED_ROWS: a DELETE of the rows the flows' `owns` predicates select (a shared sink).
 */

export interface TableResetResult {
  /** The commit that reset it (TRUNCATE, OWNED_ROWS), if one was needed. */
  readonly version?: number;
  /** Objects deleted (DROP). */
  readonly deletedObjects?: number;
}

/** `fence` is asked right before the table changes (the update's fence): a throw changes nothing. */
export async function resetTable(
  store: ObjectStore,
  reset: TableReset,
  clock: () => number,
  fence: () => Promise<void> = async () => undefined,
): Promise<TableResetResult> {
  switch (reset.how) {
    case "NONE":
      return {};
    case "DROP":
      return dropTable(store, fence);
    case "TRUNCATE":
      return truncateTable(store, clock, fence);
    case "OWNED_ROWS":
      return deleteOwnedRows(
        store,
        reset.predicates.map((p) => `(${p.owns})`),
        clock,
        fence,
      );
  }
}

async function dropTable(store: ObjectStore, fence: () => Promise<void>): Promise<TableResetResult> {
  const branches = await tableBranches(store);
  const kept = keysNamedBy(branches);
  const keys = (await listAllKeys(store, ""))
    .map((info) => info.key)
    .filter((key) => !key.startsWith(BRANCHES_FOLDER) && !kept.has(key));
  if (keys.length > 0) await fence();
  // The log first: a crash part-way leaves no readable table (a retry deletes the rest), never a log
  // that still describes data files already deleted.
  const log = keys.filter((key) => key.startsWith("_delta_log/"));
  const data = keys.filter((key) => !key.startsWith("_delta_log/"));
  for (let i = 0; i < log.length; i += 1000) await store.deleteMany(log.slice(i, i + 1000));
  for (let i = 0; i < data.length; i += 1000) await store.deleteMany(data.slice(i, i + 1000));
  return { deletedObjects: keys.length };
}

async function truncateTable(
  store: ObjectStore,
  clock: () => number,
  fence: () => Promise<void>,
): Promise<TableResetResult> {
  return withTable(store, clock, async (table) => {
    if (table.snapshot.files.size === 0) return {};
    const result = await table.truncate({ beforeCommit: fence });
    return result.status === "committed" ? { version: result.version } : {};
  });
}

async function deleteOwnedRows(
  store: ObjectStore,
  predicates: readonly string[],
  clock: () => number,
  fence: () => Promise<void>,
): Promise<TableResetResult> {
  return withTable(store, clock, async (table) => {
    const result = await table.delete(predicates.join(" OR "), { beforeCommit: fence });
    return result.status === "committed" ? { version: result.version } : {};
  });
}

/** Runs `work` on the table, or answers `{}` when there is no table (nothing to reset). */
async function withTable(
  store: ObjectStore,
  clock: () => number,
  work: (table: DeltaTable) => Promise<TableResetResult>,
): Promise<TableResetResult> {
  let table: DeltaTable;
  try {
    table = await DeltaTable.open(store, { clock });
  } catch (error) {
    if (error instanceof TableNotFoundError) return {};
    throw error;
  }
  try {
    return await work(table);
  } finally {
    await table.close();
  }
}
