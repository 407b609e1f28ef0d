import { parseSchema, toLogPath, type AddFile, type Snapshot } from "../../delta/index.ts";
import type { MaterializedViewDefinition } from "../../pipeline/definition-schema.ts";
import type { DatasetCatalog, SnapshotRead } from "../dataset-catalog.ts";
import type { DataQuality } from "../expectations.ts";
import type { SinkSession } from "../table-sink.ts";
import { partitionValuesOf, runSparkJob } from "./spark-batch.ts";
import { discardSettledSparkJobs } from "./spark-job-folders.ts";
import type { SparkJobs } from "./spark-jobs.ts";
import { planSparkReads } from "./spark-snapshot-reads.ts";
import { overwriteWithStagedFiles } from "./staged-overwrite.ts";
import { openStateVersion } from "../../state/index.ts";
import { VIEW_STATE_PARAMETER } from "../incremental-view.ts";
import { recordSparkViewState, sparkViewState, type SparkViewStateContext } from "./spark-view-state.ts";

/**
 * A materialized view's full recompute on Spark (materialized-view.ts chose it: view-engine-choice.ts).
 *
 * 1. The versions of the tables it reads are those the refresh loaded (recorded as its inputs): the
 *    job gets their live data files (spark-snapshot-reads.ts), and each view it reads as its SQL.
 * 2. The job runs the view's SQL over them, casts its rows to the columns DuckDB describes for the
 *    view (`outputSchema`: the DuckDB recompute's names and types; a column count that differs fails
 *    the job by name), then its expectations, writes the rows as data files
 *    under a fresh staging folder of the view's table, and answers a manifest. A view kept
 *    incrementally (`partials`) is computed from its partials, which the job writes too, in Ebb's
 *    state layout (spark-view-state.ts): Ebb writes their state version's manifest first.
 * 3. Ebb commits the manifest as an overwrite of the view's table (staged-overwrite.ts), with the
 *    refresh's inputs (and the state version) in the commit, fenced, dated after the newest input:
 *    the commit the DuckDB recompute makes, with the job's files. A job that dies leaves
 *    unreferenced files, which VACUUM removes; the refresh runs again from step 1.
 *
 * Its job folder is keyed by `flowId` (the view's state flow id, which no streaming flow can have)
 * and `seq`, the table version the commit is to make (on AWS the state machine runs the job between
 * two invocations of the step, and the second finds the same seq, so the same attempt).
 */

export interface SparkViewRecompute {
  readonly view: MaterializedViewDefinition;
  readonly flowId: string;
  readonly pipelineId: string;
  readonly catalog: DatasetCatalog;
  readonly session: SinkSession;
  readonly spark: SparkJobs;
  readonly reads: readonly SnapshotRead[];
  readonly snapshots: ReadonlyMap<string, Snapshot>;
  readonly seq: number;
  /** The refresh's parameters recorded in its commit (its inputs). */
  readonly extraParameters: Readonly<Record<string, string>>;
  readonly beforeCommit: () => Promise<void>;
  /** A view kept incrementally: its partials, written beside its rows (spark-view-state.ts). */
  readonly partials?: SparkViewStateContext | undefined;
  /**
   * The view's columns as the DuckDB recompute types them (a Delta schema's JSON,
   * spark-view-schema.ts): the job casts its rows to them, so the table's schema is the same
   * whichever engine recomputed it.
   */
  readonly outputSchema: string;
}

export interface SparkViewRecomputed {
  readonly version: number;
  readonly timestamp: number;
  readonly rows: number;
  readonly jobId: string;
  readonly dataQuality?: DataQuality;
}

export async function recomputeViewOnSpark(recompute: SparkViewRecompute): Promise<SparkViewRecomputed> {
  const { view, catalog, spark, seq } = recompute;
  // 1.
  const planned = await planSparkReads(catalog, spark, recompute.reads, view.name, recompute.snapshots);
  // 2.
  const partials = recompute.partials ? sparkViewState(recompute.partials, spark) : undefined;
  const state = partials && {
    ...partials,
    version: await openStateVersion({ store: catalog.store, flow: recompute.partials!.flow }),
  };
  const job = await runSparkJob(
    {
      pipelineId: recompute.pipelineId,
      flow: recompute.flowId,
      dataset: view.name,
      sql: view.sql,
      seq,
      txn: { appId: recompute.flowId, version: seq },
      reads: planned.reads,
      expectations: view.expectations,
      catalog,
      spark,
    },
    { outputSchema: recompute.outputSchema, ...(state ? { state } : {}) },
  );
  const stateVersion = recompute.partials
    ? await recordSparkViewState(recompute.partials, job.manifest.state, job.jobId)
    : undefined;
  // 3.
  const partitionBy = view.partition_by ?? [];
  const now = recompute.session.clock();
  const adds: AddFile[] = job.manifest.files.map((file) => ({
    path: toLogPath(file.path),
    partitionValues: partitionValuesOf(file, partitionBy, { flow: recompute.flowId, seq }, job.jobId),
    size: file.size,
    modificationTime: now,
    dataChange: true,
    stats: file.stats,
  }));
  const committed = await overwriteWithStagedFiles(
    {
      store: catalog.tableStore(view.name),
      name: view.name,
      ...(view.partition_by ? { partitionBy: view.partition_by } : {}),
      ...(view.properties ? { properties: view.properties } : {}),
    },
    recompute.session,
    { schema: parseSchema(job.manifest.schemaString), adds },
    {
      ...(planned.newest !== undefined ? { timestampFloor: planned.newest + 1 } : {}),
      extraParameters: {
        ...recompute.extraParameters,
        ...(stateVersion ? { [VIEW_STATE_PARAMETER]: stateVersion } : {}),
      },
      beforeCommit: recompute.beforeCommit,
    },
  );
  // The job's folder (its manifest) is read by no one now; its data files are the table's.
  await discardSettledSparkJobs(catalog.store, recompute.pipelineId, recompute.flowId, seq);
  return {
    version: committed.version,
    timestamp: committed.timestamp,
    rows: committed.rows,
    jobId: job.jobId,
    ...(job.dataQuality ? { dataQuality: job.dataQuality } : {}),
  };
}
