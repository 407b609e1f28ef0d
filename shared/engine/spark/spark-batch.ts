import { randomUUID } from "node:crypto";
import { dataFileKey, parseSchema, toLogPath, type AddFile } from "../../delta/index.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { ExpectationDefinition } from "../../pipeline/definition-schema.ts";
import { ExpectationConditionError, ExpectationViolationError } from "../errors.ts";
import type { DataQuality } from "../expectations.ts";
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
  type SparkCdcApplyRequest,
  type SparkFailure,
  type SparkManifest,
  type SparkSnapshotRead,
} from "./spark-batch-contract.ts";
import type { SparkJobs } from "./spark-jobs.ts";
import { sparkKafkaInput } from "./spark-kafka-input.ts";
import { vacuumedChangeFileError } from "./vacuumed-change-file.ts";
import {
  prepareSparkState,
  recordSparkState,
  type PreparedSparkState,
  type SparkStateContext,
} from "./spark-state.ts";
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
  /** A stream-stream join's second stream, planned beside `input`. */
  readonly joinedInput?: PlannedInput | undefined;
  /** The other datasets the SQL reads, as planned (spark-snapshot-reads.ts). */
  readonly reads?: readonly SparkSnapshotRead[] | undefined;
  /** The newest commit of the tables `reads` names (the batch's commit is dated after it). */
  readonly readsNewest?: number | undefined;
  /** The dataset's expectations (the job evaluates them as expectations.ts does). */
  readonly expectations?: readonly ExpectationDefinition[] | undefined;
  /** An AUTO CDC flow's conditions: the job classifies each row's event kind (contract `CDC_OP_COLUMN`). */
  readonly cdc?: SparkBatchRequest["cdc"];
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
  readonly dataQuality?: DataQuality;
  readonly state?: StateProgress;
}

/** A job that ran to its manifest (steps 1-3 without the commit). */
export interface SparkJobResult {
  readonly manifest: SparkManifest;
  /** Where the job wrote its manifest (a stateful job's state answer goes beside it). */
  readonly manifestKey: string;
  readonly jobId: string;
  /** The job run's folder under the table root (in the attempt's), where it wrote the rows. */
  readonly stagedPath: string;
  /** The expectations' counts, as the DuckDB engine reports them. */
  readonly dataQuality?: DataQuality;
}

export async function runSparkBatch(batch: SparkBatch): Promise<SparkBatchOutcome> {
  const state = batch.state ? await prepareSparkState(batch.state) : undefined;
  const {
    manifest,
    manifestKey: key,
    jobId,
    dataQuality,
  } = await runSparkJob(batch, {
    partitionColumns: batch.target.partitionBy ?? [],
    ...(state ? { state } : {}),
  });

  // 3. The manifest's state (a stateful flow's next version), then its files, committed by Ebb.
  let progress: StateProgress | undefined;
  if (state && batch.state) {
    if (!manifest.state)
      throw new SparkJobFailedError(batch.flow, batch.seq, jobId, `its manifest ${key} has no state`);
    progress = await recordSparkState(batch.state, state.version, manifest.state, jobId);
    await batch.afterStateWrite?.();
  }
  await batch.beforeCommit();
  const now = batch.session.clock();
  const adds: AddFile[] = manifest.files.map((file) => ({
    // The manifest names the file's key; the log names it as a URI (a `%` of an escaped folder: `%25`).
    path: toLogPath(file.path),
    partitionValues: partitionValuesOf(file, batch.target.partitionBy ?? [], batch, jobId),
    size: file.size,
    modificationTime: now,
    dataChange: true,
    stats: file.stats,
  }));
  const newest = newestUpstreamOf(batch.input, manifest, batch.readsNewest);
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
    jobId,
    ...(newest !== undefined ? { newestUpstreamTimestamp: newest } : {}),
    skippedRestores: batch.input.kind === "table" ? batch.input.skippedRestores : [],
    ...(dataQuality ? { dataQuality } : {}),
    ...(progress ? { state: progress } : {}),
  };
}

/** Steps 1-2 and the manifest's read: what the job wrote, not committed. */
export async function runSparkJob(
  batch: Omit<SparkBatch, "target" | "session" | "beforeCommit" | "input"> & {
    /** None for a materialized view's recompute (spark-view-refresh.ts): it reads only `reads`. */
    readonly input?: PlannedInput;
  },
  options: {
    readonly partitionColumns?: readonly string[];
    readonly state?: PreparedSparkState;
    /** An AUTO CDC batch the job applies itself (spark-cdc-apply.ts), given its state staging key. */
    readonly cdcApply?: (stagingKey: string) => SparkCdcApplyRequest;
    /** A materialized view's columns as DuckDB types them (spark-view-schema.ts), for the job to cast to. */
    readonly outputSchema?: string;
  } = {},
): Promise<SparkJobResult> {
  // 1. The request (of the attempt whose job already ran, when the port holds one).
  const attempt = batch.spark.attemptOf?.(batch.flow, batch.seq) ?? randomUUID().slice(0, 8);
  const key = manifestKey(batch.pipelineId, batch.flow, batch.seq, attempt);
  const expectations = batch.expectations ?? [];
  const request: SparkBatchRequest = {
    flow: batch.flow,
    dataset: batch.dataset,
    sql: options.state?.sql ?? batch.sql,
    txn: batch.txn,
    ...(batch.input ? { input: sparkInput({ ...batch, input: batch.input }) } : {}),
    ...(batch.reads && batch.reads.length > 0 ? { reads: batch.reads } : {}),
    ...(batch.joinedInput ? { joinedInput: sparkInput({ ...batch, input: batch.joinedInput }) } : {}),
    ...(expectations.length > 0
      ? {
          expectations: expectations.map((e) => ({
            name: e.name,
            condition: e.condition,
            onViolation: e.on_violation,
          })),
        }
      : {}),
    ...(batch.cdc
      ? {
          cdc: {
            ...batch.cdc,
            ...(options.cdcApply
              ? { apply: options.cdcApply(key.replace(/manifest\.json$/, "cdc-state")) }
              : {}),
          },
        }
      : {}),
    output: {
      tableUri: batch.spark.bucketUri(batch.catalog.tablePrefix(batch.dataset)),
      stagingPath: stagingPath(batch.seq, attempt),
      partitionColumns: [...(options.partitionColumns ?? [])],
    },
    manifestUri: batch.spark.bucketUri(key),
    ...(options.outputSchema ? { outputSchema: options.outputSchema } : {}),
    ...(options.state ? { state: options.state.request(key.replace(/manifest\.json$/, "state")) } : {}),
  };

  // 2. The job.
  const run = await batch.spark.run(request);
  if (run.failure) throw failureError(batch, run.jobId, run.failure);
  const manifest = await readManifest(batch.catalog.store, key, batch, run.jobId);
  const quality = manifest.dataQuality;
  return {
    manifest,
    manifestKey: key,
    jobId: run.jobId,
    // The run's own folder: an earlier run of the same request may have left files beside it.
    stagedPath: manifest.stagingPath ?? request.output.stagingPath,
    ...(quality
      ? {
          dataQuality: {
            dropped_records: quality.droppedRecords,
            expectations: quality.expectations.map((e) => ({
              name: e.name,
              dataset: batch.dataset,
              passed_records: e.passedRecords,
              failed_records: e.failedRecords,
            })),
          },
        }
      : {}),
  };
}

/** A failed job as the error the DuckDB engine gives for the same cause (an expectation's, say). */
function failureError(
  batch: Pick<SparkBatch, "flow" | "dataset" | "seq" | "expectations"> & { readonly input?: PlannedInput },
  jobId: string,
  failure: SparkFailure,
): Error {
  const vacuumed = vacuumedChangeFileError(batch.input, failure);
  if (vacuumed) return vacuumed;
  const expectation = batch.expectations?.find((e) => e.name === failure.details?.expectation);
  if (failure.kind === "expectation" && expectation) {
    return new ExpectationViolationError(
      batch.dataset,
      batch.flow,
      expectation.name,
      expectation.condition,
      failure.details?.failedRecords ?? 0,
      failure.details?.row ?? "null",
    );
  }
  if (failure.kind === "condition" && expectation) {
    return new ExpectationConditionError(
      `expectation "${expectation.name}" of dataset "${batch.dataset}" ${failure.message}`,
      { data: { dataset: batch.dataset, flow: batch.flow, expectation: expectation.name } },
    );
  }
  if (failure.kind === "analysis")
    return new FlowNotSupportedOnSparkError(batch.flow, `Spark SQL refused it: ${failure.message}`);
  return new SparkJobFailedError(batch.flow, batch.seq, jobId, failure.message);
}

async function readManifest(
  store: ObjectStore,
  key: string,
  batch: Pick<SparkBatch, "flow" | "dataset" | "seq" | "txn" | "expectations"> & {
    readonly input?: PlannedInput;
  },
  jobId: string,
): Promise<SparkManifest> {
  const parsed = sparkManifestSchema.safeParse(JSON.parse(new TextDecoder().decode(await store.get(key))));
  if (!parsed.success)
    throw new SparkJobFailedError(batch.flow, batch.seq, jobId, `its manifest ${key} is not one Ebb reads`);
  const manifest = parsed.data;
  if (manifest.status === "failed") throw failureError(batch, jobId, manifest);
  if (manifest.txn.appId !== batch.txn.appId || manifest.txn.version !== batch.txn.version)
    throw new SparkJobFailedError(batch.flow, batch.seq, jobId, `its manifest ${key} is another batch's`);
  return manifest;
}

/**
 * The newest upstream time the batch consumed, which its commit is dated after (micro-batch.ts): an
 * upstream table's newest commit, or a Kafka batch's newest record as the job read it, and the newest
 * commit of the tables its SQL read.
 */
export function newestUpstreamOf(
  input: PlannedInput,
  manifest: SparkManifest,
  readsNewest: number | undefined,
): number | undefined {
  const ownInput =
    input.kind === "table"
      ? input.newestUpstreamTimestamp
      : input.kind === "kafka"
        ? manifest.newestRecordMs
        : undefined;
  const known = [ownInput, readsNewest].filter((t): t is number => t !== undefined);
  return known.length > 0 ? Math.max(...known) : undefined;
}

/** The planned input as the URIs the job reads. */
function sparkInput(batch: Pick<SparkBatch, "input" | "spark" | "catalog">): SparkBatchInput {
  const input = batch.input;
  if (input.kind === "files") {
    return {
      kind: "files",
      format: input.format,
      schema: input.schema ?? null,
      uris: input.keys.map((key) => batch.spark.locationUri(input.location, key)),
      ...(input.columnsOnly ? { columnsOnly: true } : {}),
    };
  }
  if (input.kind === "kafka") return sparkKafkaInput(input);
  const root =
    "dataset" in input.upstream
      ? batch.spark.bucketUri(batch.catalog.tablePrefix(input.upstream.dataset))
      : batch.spark.locationUri(input.upstream.path, "");
  // The log names a file as a URI (`%25` for a `%` of an escaped partition folder); the job reads its key.
  const uri = (logPath: string) => `${root.replace(/\/$/, "")}/${dataFileKey(logPath)}`;
  return {
    kind: "table",
    schemaString: input.schemaString,
    partitionColumns: input.partitionColumns,
    ...(input.changeFeed
      ? {
          changes: input.changeFeed.map((file) => ({
            uri: uri(file.path),
            partitionValues: file.partitionValues,
            version: file.version,
            timestampMs: file.timestamp,
            changeType: file.changeType,
          })),
        }
      : {}),
    slices: input.slices.map((slice) => ({
      uri: uri(slice.path),
      partitionValues: slice.partitionValues,
      firstRow: slice.firstRow,
      endRow: slice.endRow,
      fileRows: slice.fileRows,
    })),
  };
}

/** A file's partition values: exactly the table's partition columns (an engine bug otherwise). */
export function partitionValuesOf(
  file: SparkManifest["files"][number],
  columns: readonly string[],
  batch: Pick<SparkBatch, "flow" | "seq">,
  jobId: string,
): Record<string, string | null> {
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
