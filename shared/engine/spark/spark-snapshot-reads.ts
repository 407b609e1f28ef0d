import { dataFileKey, type Snapshot } from "../../delta/index.ts";
import type { DatasetCatalog, SnapshotRead } from "../dataset-catalog.ts";
import { loadReadSnapshots } from "../snapshot-views.ts";
import type { SparkSnapshotRead } from "./spark-batch-contract.ts";
import { FlowNotSupportedOnSparkError } from "./errors.ts";
import type { SparkJobs } from "./spark-jobs.ts";

/**
 * What a Spark job reads besides its planned input (a stream-static join, a materialized view's
 * inputs): as the DuckDB engine does (snapshot-views.ts), Ebb loads the current snapshot of each
 * table read when the batch runs and hands the job that version's live data files, which it
 * registers as a temp view under the table's name (functions/spark/ebb_spark_reads.py); a view read
 * goes as its SQL. The job never resolves a version itself: Delta's `versionAsOf` would also reach
 * versions a RESTORE abandoned, and a table changing while the job runs would not be the one Ebb
 * planned.
 *
 * A data file with a deletion vector is refused (`FLOW_NOT_SUPPORTED_ON_SPARK`, naming the table):
 * the job reads Parquet files whole. The DuckDB engine refuses them too (delta/read/scan.ts).
 */

export interface PlannedSparkReads {
  readonly reads: readonly SparkSnapshotRead[];
  /** The newest commit among the tables read (what the batch writes is dated after it). */
  readonly newest: number | undefined;
  /** The tables' snapshots, by name (a materialized view records their versions). */
  readonly snapshots: ReadonlyMap<string, Snapshot>;
}

/** `what` names the flow or view in a refusal. */
export async function planSparkReads(
  catalog: DatasetCatalog,
  spark: SparkJobs,
  reads: readonly SnapshotRead[],
  what: string,
  snapshots?: ReadonlyMap<string, Snapshot>,
): Promise<PlannedSparkReads> {
  const loaded = snapshots ?? (await loadReadSnapshots(reads));
  let newest: number | undefined;
  const planned = reads.map((read): SparkSnapshotRead => {
    if (read.kind === "view") return { kind: "view", name: read.name, sql: read.sql };
    const snapshot = loaded.get(read.name)!;
    newest = Math.max(newest ?? Number.NEGATIVE_INFINITY, snapshot.timestamp);
    return tableRead(catalog, spark, read.name, snapshot, what);
  });
  return { reads: planned, newest, snapshots: loaded };
}

function tableRead(
  catalog: DatasetCatalog,
  spark: SparkJobs,
  name: string,
  snapshot: Snapshot,
  what: string,
): SparkSnapshotRead {
  const root = spark.bucketUri(catalog.tablePrefix(name)).replace(/\/$/, "");
  const files = [...snapshot.files.values()].map((file) => {
    if (file.deletionVector)
      throw new FlowNotSupportedOnSparkError(
        what,
        `table ${name} (version ${snapshot.version}) has data files with deletion vectors, which the Spark engine does not read: purge them first (REORG TABLE ${name} APPLY (PURGE) in Delta Lake)`,
      );
    // The log names a file as a URI (`%25` for a `%` of an escaped partition folder); the job reads its key.
    return { uri: `${root}/${dataFileKey(file.path)}`, partitionValues: { ...file.partitionValues } };
  });
  return {
    kind: "table",
    name,
    schemaString: snapshot.metadata.schemaString,
    partitionColumns: [...snapshot.metadata.partitionColumns],
    // In the log's order of paths: the same request for the same version.
    files: files.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0)),
  };
}
