import { quoteLiteral } from "../duck/sql-text.ts";
import type { MaterializedViewDefinition } from "../pipeline/definition-schema.ts";
import type { DatasetCatalog } from "./dataset-catalog.ts";
import { Sandbox } from "./sandbox.ts";
import { registerSnapshotViews } from "./snapshot-views.ts";
import { overwriteTable, type SinkSession } from "./table-sink.ts";

/**
 * Refreshing a materialized view: its SQL runs in the sandbox over the current snapshots of what it
 * reads, and the result replaces the table's contents in one commit (an overwrite), stamped at least
 * 1 ms after the newest input commit so the view's history lines up causally with its inputs.
 */

export interface ViewRefresh {
  readonly rows: number;
  readonly tableVersion: number;
  readonly committedAt: number;
  readonly durationMs: number;
}

export async function refreshMaterializedView(
  view: MaterializedViewDefinition,
  catalog: DatasetCatalog,
  session: SinkSession,
): Promise<ViewRefresh> {
  const started = session.clock();
  const sandbox = await Sandbox.open({ namespace: catalog.namespace });
  try {
    const newestInput = await registerSnapshotViews(sandbox, catalog.snapshotReads(view.name));
    const output = await sandbox.exportUserQuery(view.sql, `materialized view "${view.name}"`);
    const committed = await overwriteTable(
      {
        store: catalog.tableStore(view.name),
        name: view.name,
        ...(view.partition_by ? { partitionBy: view.partition_by } : {}),
        ...(view.properties ? { properties: view.properties } : {}),
      },
      session,
      `SELECT * FROM read_parquet(${quoteLiteral(output.path)})`,
      newestInput === undefined ? undefined : newestInput + 1,
    );
    return {
      rows: output.rows,
      tableVersion: committed.version,
      committedAt: committed.timestamp,
      durationMs: session.clock() - started,
    };
  } finally {
    await sandbox.close();
  }
}
