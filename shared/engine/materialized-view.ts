import { quoteLiteral } from "../duck/sql-text.ts";
import { currentSnapshot, type Snapshot, TableNotFoundError } from "../delta/index.ts";
import type { MaterializedViewDefinition } from "../pipeline/definition-schema.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { DatasetCatalog, SnapshotRead } from "./dataset-catalog.ts";
import { Sandbox } from "./sandbox.ts";
import { loadReadSnapshots, registerSnapshotViews } from "./snapshot-views.ts";
import { overwriteTable, type SinkSession } from "./table-sink.ts";
import type { UpdateFence } from "./update-fence.ts";

/**
 * Refreshing a materialized view: its SQL runs in the sandbox over the current snapshots of what it
 * reads, and the result replaces the table's contents in one commit (an overwrite), stamped at least
 * 1 ms after the newest input commit so the view's history lines up causally with its inputs.
 *
 * 1. Load the current snapshot of every input table and of the view's own table.
 * 2. The refresh's inputs: the view's definition, the SQL of each view it reads and the exact
 *    `metaData.id` and version of each table it reads.
 * 3. When the view's latest commit is a refresh from those same inputs, its contents are already what
 *    the SQL would produce: nothing to do. Any other latest commit (a RESTORE or TRUNCATE of the view,
 *    a table not there) and any input at another version (an append, a RESTORE of an input, a table
 *    dropped and recreated) recomputes.
 * 4. Otherwise run the SQL over the snapshots of step 1 and overwrite, recording the inputs in the
 *    commit's `operationParameters`.
 */

/** The `operationParameters` key of a refresh commit holding its inputs (step 2). */
export const VIEW_INPUTS_PARAMETER = "ebbViewInputs";

export interface ViewRefresh {
  readonly rows: number;
  readonly tableVersion: number;
  readonly committedAt: number;
  readonly durationMs: number;
  /** False when the view's inputs were unchanged since its last refresh: nothing was recomputed. */
  readonly recomputed: boolean;
}

/** `fence` is the update's (update-fence.ts), asked right before the overwrite commits. */
export async function refreshMaterializedView(
  view: MaterializedViewDefinition,
  catalog: DatasetCatalog,
  session: SinkSession,
  fence: UpdateFence,
): Promise<ViewRefresh> {
  const started = session.clock();
  const store = catalog.tableStore(view.name);
  const reads = catalog.snapshotReads(view.name);
  // In the engine's session, one after the other: it decodes any log checkpoint, one query at a time.
  const snapshots = await loadReadSnapshots(reads, session.duck);
  const current = await latestSnapshot(store, session);
  const inputs = viewInputs(view, reads, snapshots);
  const recorded = current?.commitInfo?.operationParameters?.[VIEW_INPUTS_PARAMETER];
  if (current && recorded === inputs) {
    return {
      rows: Number(current.commitInfo?.operationMetrics?.["numOutputRows"] ?? 0),
      tableVersion: current.version,
      committedAt: current.timestamp,
      durationMs: session.clock() - started,
      recomputed: false,
    };
  }
  const sandbox = await Sandbox.open({ namespace: catalog.namespace, signal: session.signal });
  try {
    const newestInput = await registerSnapshotViews(sandbox, reads, snapshots);
    const output = await sandbox.exportUserQuery(view.sql, `materialized view "${view.name}"`);
    const committed = await overwriteTable(
      {
        store,
        name: view.name,
        ...(view.partition_by ? { partitionBy: view.partition_by } : {}),
        ...(view.properties ? { properties: view.properties } : {}),
      },
      session,
      `SELECT * FROM read_parquet(${quoteLiteral(output.path)})`,
      {
        ...(newestInput === undefined ? {} : { timestampFloor: newestInput + 1 }),
        extraParameters: { [VIEW_INPUTS_PARAMETER]: inputs },
        beforeCommit: () => fence(`the refresh of materialized view "${view.name}"`),
      },
    );
    return {
      rows: output.rows,
      tableVersion: committed.version,
      committedAt: committed.timestamp,
      durationMs: session.clock() - started,
      recomputed: true,
    };
  } finally {
    await sandbox.close();
  }
}

async function latestSnapshot(store: ObjectStore, session: SinkSession): Promise<Snapshot | undefined> {
  try {
    return await currentSnapshot(store, { duck: session.duck });
  } catch (error) {
    if (error instanceof TableNotFoundError) return undefined;
    throw error;
  }
}

/** Step 2, as the JSON string recorded in the refresh commit (compared as a whole). */
function viewInputs(
  view: MaterializedViewDefinition,
  reads: readonly SnapshotRead[],
  snapshots: ReadonlyMap<string, Snapshot>,
): string {
  return JSON.stringify({
    view: { sql: view.sql, partition_by: view.partition_by ?? null, properties: view.properties ?? null },
    reads: reads.map((read) => {
      if (read.kind === "view") return { view: read.name, sql: read.sql };
      const snapshot = snapshots.get(read.name)!;
      return { table: read.name, id: snapshot.metadata.id, version: snapshot.version };
    }),
  });
}
