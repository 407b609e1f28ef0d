import { randomUUID } from "node:crypto";
import { dataFileKey, parseSchema, toLogPath, type AddFile } from "../../delta/index.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { DatasetCatalog } from "../dataset-catalog.ts";
import type { PlannedInput } from "../planned-input.ts";
import { appendStagedFiles, type BatchCommit, type SinkSession, type SinkTarget } from "../table-sink.ts";
import { FlowNotSupportedOnSparkError, SparkJobFailedError } from "./errors.ts";
import {
  manifestKey,
  sparkManifestSchema,
  stagingPath,
  type SparkBatchInput,
  type SparkBatchRequest,
  type SparkManifest,
} from "./spark-batch-contract.ts";
import type { SparkJobs } from "./spark-jobs.ts";
import { prepareSparkState, recordSparkState, type SparkStateContext } from "./spark-state.ts";
import type { StateProgress } from "../stateful/stateful-batch.ts";

/**
 * Steps 3 and 4 of a micro-batch on Spark (micro-batch.ts): Ebb has planned the batch; Spark computes it.
 *
 * 1. Name the planned input as URIs, and this attempt's staging folder and manifest (a fresh attempt
 *    id: a retried batch never meets a dead attempt's files).
 * 2. Run the job (the `SparkJobs` port) until it ends; a failure is refused by name, nothing committed.
 * 3. Read the manifest the job wrote (parsed, not trusted) and commit its files through the batch
 *    commit path with the batch's txn (table-sink.ts `appendStagedFiles`): exactly once, fenced, and a
 *    txn the table already holds is not committed again (a retry after the commit converges).
 */

export interface SparkBatch {
  readonly pipelineId: string;
  readonly flow: string;
  readonly dataset: string;
  readonly sql: string;
  readonly seq: number;
  readonly txn: { readonly appId: string; readonly version: number };
  readonly input: PlannedInput;
  readonly catalog: DatasetCatalog;
  readonly target: SinkTarget;
  readonly session: SinkSession;
  readonly spark: SparkJobs;
  /** Runs between the job's end and the commit (crash injection, the update fence). */
  readonly beforeCommit: () => Promise<void>;
  /** A stateful flow's operators (spark-state.ts): its next state version is written before the commit. */
  readonly state?: SparkStateContext;
  /** Runs once the next state version is written (crash injection). */
  readonly afterStateWrite?: () => Promise<void>;
}

export interface SparkBatchOutcome extends BatchCommit {
  readonly rowsIn: number;
  readonly jobId: string;
  readonly newestUpstreamTimestamp?: number;
  readonly skippedRestores: readonly { readonly version: number; readonly restoredVersion: number }[];
  readonly state?: StateProgress;
}

export async function runSparkBatch(batch: SparkBatch): Promise<SparkBatchOutcome> {
  // 1. The request.
  const attempt = randomUUID().slice(0, 8);
  const key = manifestKey(batch.pipelineId, batch.flow, batch.seq, attempt);
  const state = batch.state ? await prepareSparkState(batch.state) : undefined;
  const request: SparkBatchRequest = {
    flow: batch.flow,
    dataset: batch.dataset,
    sql: batch.sql,
    txn: batch.txn,
    input: sparkInput(batch),
    output: {
      tableUri: batch.spark.bucketUri(batch.catalog.tablePrefix(batch.dataset)),
      stagingPath: stagingPath(batch.seq, attempt),
      partitionColumns: batch.target.partitionBy ?? [],
    },
    manifestUri: batch.spark.bucketUri(key),
    ...(state ? { state: state.request(key.replace(/manifest\.json$/, "state")) } : {}),
  };

  // 2. The job.
  const run = await batch.spark.run(request);
  if (run.failure?.kind === "analysis")
    throw new FlowNotSupportedOnSparkError(batch.flow, `Spark SQL refused it: ${run.failure.message}`);
  if (run.failure) throw new SparkJobFailedError(batch.flow, batch.seq, run.jobId, run.failure.message);

  // 3. The manifest, committed by Ebb.
  const manifest = await readManifest(batch.catalog.store, key, batch, run.jobId);
  let progress: StateProgress | undefined;
  if (state && batch.state) {
    if (!manifest.state)
      throw new SparkJobFailedError(batch.flow, batch.seq, run.jobId, `its manifest ${key} has no state`);
    progress = await recordSparkState(batch.state, state.version, manifest.state, run.jobId);
    await batch.afterStateWrite?.();
  }
  await batch.beforeCommit();
  const now = batch.session.clock();
  const adds: AddFile[] = manifest.files.map((file) => ({
    // The manifest names the file's key; the log names it as a URI (a `%` of an escaped folder: `%25`).
    path: toLogPath(file.path),
    partitionValues: partitionValuesOf(file, batch, run.jobId),
    size: file.size,
    modificationTime: now,
    dataChange: true,
    stats: file.stats,
  }));
  const newest = batch.input.kind === "table" ? batch.input.newestUpstreamTimestamp : undefined;
  const committed = await appendStagedFiles(
    batch.target,
    batch.session,
    { schema: parseSchema(manifest.schemaString), adds },
    batch.txn,
    newest !== undefined ? { timestampFloor: newest + 1 } : {},
  );
  return {
    ...committed,
    rowsIn: manifest.rowsIn,
    jobId: run.jobId,
    ...(newest !== undefined ? { newestUpstreamTimestamp: newest } : {}),
    skippedRestores: batch.input.kind === "table" ? batch.input.skippedRestores : [],
    ...(progress ? { state: progress } : {}),
  };
}

async function readManifest(
  store: ObjectStore,
  key: string,
  batch: SparkBatch,
  jobId: string,
): Promise<SparkManifest> {
  const parsed = sparkManifestSchema.safeParse(JSON.parse(new TextDecoder().decode(await store.get(key))));
  if (!parsed.success)
    throw new SparkJobFailedError(batch.flow, batch.seq, jobId, `its manifest ${key} is not one Ebb reads`);
  const manifest = parsed.data;
  if (manifest.status === "failed")
    throw new SparkJobFailedError(batch.flow, batch.seq, jobId, manifest.message);
  if (manifest.txn.appId !== batch.txn.appId || manifest.txn.version !== batch.txn.version)
    throw new SparkJobFailedError(batch.flow, batch.seq, jobId, `its manifest ${key} is another batch's`);
  return manifest;
}

/** The planned input as the URIs the job reads. */
function sparkInput(batch: SparkBatch): SparkBatchInput {
  const input = batch.input;
  if (input.kind === "files") {
    return {
      kind: "files",
      format: input.format,
      schema: input.schema ?? null,
      uris: input.keys.map((key) => batch.spark.locationUri(input.location, key)),
    };
  }
  const root =
    "dataset" in input.upstream
      ? batch.spark.bucketUri(batch.catalog.tablePrefix(input.upstream.dataset))
      : batch.spark.locationUri(input.upstream.path, "");
  return {
    kind: "table",
    schemaString: input.schemaString,
    partitionColumns: input.partitionColumns,
    slices: input.slices.map((slice) => ({
      // The log names a file as a URI (`%25` for a `%` of an escaped partition folder); the job reads its key.
      uri: `${root.replace(/\/$/, "")}/${dataFileKey(slice.path)}`,
      partitionValues: slice.partitionValues,
      firstRow: slice.firstRow,
      endRow: slice.endRow,
      fileRows: slice.fileRows,
    })),
  };
}

/** A file's partition values: exactly the table's partition columns (an engine bug otherwise). */
function partitionValuesOf(
  file: SparkManifest["files"][number],
  batch: SparkBatch,
  jobId: string,
): Record<string, string | null> {
  const columns = batch.target.partitionBy ?? [];
  const named = Object.keys(file.partitionValues);
  if (named.length !== columns.length || !columns.every((c) => c in file.partitionValues))
    throw new SparkJobFailedError(
      batch.flow,
      batch.seq,
      jobId,
      `its file ${file.path} has partition values for (${named.join(", ")}), not the table's (${columns.join(", ")})`,
    );
  return { ...file.partitionValues };
}
