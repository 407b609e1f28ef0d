import type { Action } from "../log/actions.ts";
import type { OperationDescription } from "./commit-info.ts";
import type { CommitRequirement } from "./commit-requirements.ts";
import type { FileWriteContext } from "../write/data-file-writer.ts";
import { tableProperties } from "../table/table-properties.ts";
import { parseSchema } from "../table/schema.ts";
import type { TableLayout } from "../write/data-file-writer.ts";
import type { LocalFileCache } from "../read/table-file-rows.ts";
import type { Snapshot } from "../read/snapshot.ts";

/** What a data operation needs: the store, a DuckDB session and scratch folder, a clock, local file copies. */
export interface OperationContext extends FileWriteContext {
  readonly files: LocalFileCache;
}

/**
 * An operation's outcome before it is committed: its data files are written (orphans until the
 * commit lands), and this is the rest of the commit. `commit()` turns it into a version.
 */
export interface PreparedCommit {
  readonly actions: readonly Action[];
  readonly operation: OperationDescription;
  readonly requirements: readonly CommitRequirement[];
}

/** The schema and partition columns of `snapshot`, as the file writer wants them. */
export function layoutOf(snapshot: Snapshot): TableLayout {
  const properties = tableProperties(snapshot.metadata);
  return {
    schema: parseSchema(snapshot.metadata.schemaString),
    partitionColumns: snapshot.metadata.partitionColumns,
    compression: properties.parquetCompression,
    indexedColumns: properties.indexedColumns,
    targetFileSizeBytes: properties.targetFileSizeBytes,
  };
}

/** Whether commits to `snapshot`'s table must carry change data files (PROTOCOL.md "Writer Requirements for AddCDCFile"). */
export function writesChangeData(snapshot: Snapshot): boolean {
  return snapshot.protocol.minWriterVersion >= 4 && tableProperties(snapshot.metadata).changeDataFeed;
}

let tempCounter = 0;

/** A DuckDB temp table name no other operation in this process uses. */
export function tempTableName(label: string): string {
  return `__ebb_${label}_${process.pid}_${tempCounter++}`;
}
