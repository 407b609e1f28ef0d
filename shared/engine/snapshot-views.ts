import { quoteIdentifier } from "../duck/sql-text.ts";
import {
  type AddFile,
  dataFileKey,
  fileRelationSql,
  type FileSource,
  currentSnapshot,
  partitionConstants,
  type Snapshot,
  tableColumns,
  TableNotFoundError,
} from "../delta/index.ts";
import { mapInParallel } from "../object-store/map-in-parallel.ts";
import type { SnapshotRead } from "./dataset-catalog.ts";
import { SourceUnavailableError } from "./errors.ts";
import type { Sandbox } from "./sandbox.ts";

/** The current snapshot of each table `reads` names, by name. */
export async function loadReadSnapshots(reads: readonly SnapshotRead[]): Promise<Map<string, Snapshot>> {
  const snapshots = new Map<string, Snapshot>();
  for (const read of reads) if (read.kind === "table") snapshots.set(read.name, await loadReadSnapshot(read));
  return snapshots;
}

async function loadReadSnapshot(read: Extract<SnapshotRead, { kind: "table" }>): Promise<Snapshot> {
  try {
    return await currentSnapshot(read.store);
  } catch (error) {
    if (!(error instanceof TableNotFoundError)) throw error;
    throw new SourceUnavailableError(
      `dataset ${read.name} has no table yet, so it cannot be read: run an update that includes it first`,
      { cause: error, data: { dataset: read.name } },
    );
  }
}

/**
 * Registers what a query reads besides `source` in the sandbox: each table as a read-only view of
 * its current snapshot (its data files copied into the sandbox folder first, since the sandbox can
 * read nothing else), each view as its SQL. `snapshots` are the tables' snapshots when already
 * loaded (`loadReadSnapshots`). Returns the newest commit timestamp read (for the causal timestamp
 * of what the query writes).
 */
export async function registerSnapshotViews(
  sandbox: Sandbox,
  reads: readonly SnapshotRead[],
  snapshots?: ReadonlyMap<string, Snapshot>,
): Promise<number | undefined> {
  let newest: number | undefined;
  for (const read of reads) {
    const name = quoteIdentifier(read.name);
    if (read.kind === "view") {
      await sandbox.runUserQuery(read.sql, `__ebb_view_${read.name}`, `view ${read.name}`);
      await sandbox.run(
        `CREATE OR REPLACE TEMP VIEW ${name} AS SELECT * FROM ${quoteIdentifier(`__ebb_view_${read.name}`)}`,
      );
      continue;
    }
    const snapshot = snapshots?.get(read.name) ?? (await loadReadSnapshot(read));
    await registerTableFiles(sandbox, read, snapshot, snapshot.files.values());
    newest = Math.max(newest ?? Number.NEGATIVE_INFINITY, snapshot.timestamp);
  }
  return newest;
}

/** Data files fetched at once into the sandbox. */
const COPY_CONCURRENCY = 8;

/**
 * Registers table `read` in the sandbox as a read-only view of some of `snapshot`'s data files (all
 * of them for a read of the table; those it gained since a version, for an incremental view).
 */
export async function registerTableFiles(
  sandbox: Sandbox,
  read: Extract<SnapshotRead, { kind: "table" }>,
  snapshot: Snapshot,
  files: Iterable<AddFile>,
): Promise<void> {
  const { schema, columns } = tableColumns(snapshot);
  const copy = async (file: AddFile): Promise<FileSource> => ({
    localPath: await sandbox.takeObject(read.store, dataFileKey(file.path), ".parquet"),
    constants: partitionConstants(schema, snapshot.metadata.partitionColumns, file.partitionValues),
  });
  const sources = await mapInParallel([...files], COPY_CONCURRENCY, copy);
  const sql = await fileRelationSql(sandbox.duck, sources, columns);
  // A view over the files copied or linked in (immutable while the sandbox lives): no second copy in memory.
  await sandbox.run(`CREATE OR REPLACE TEMP VIEW ${quoteIdentifier(read.name)} AS ${sql}`);
}
