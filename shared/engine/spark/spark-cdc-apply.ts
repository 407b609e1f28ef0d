import {
  currentSnapshot,
  dataFileKey,
  parseSchema,
  TableNotFoundError,
  toLogPath,
  writesChangeData,
  type TxnMarker,
} from "../../delta/index.ts";
import type { AutoCdcFlowPlan } from "../../pipeline/plan/index.ts";
import { flowStatePrefix } from "../../store/bucket-layout.ts";
import { nextTable } from "../../state/state-manifest.ts";
import { STATE_FORMAT, type StateManifest, type StateVersion } from "../../state/index.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { TIE_HASH_TYPES } from "../auto-cdc/batch-reduction.ts";
import { checkCdcLayout } from "../auto-cdc/cdc-compatibility.ts";
import { cdcLayout, END_AT, START_AT, storedLayoutOf } from "../auto-cdc/cdc-layout.ts";
import { CDC_TABLE, nextCdcMeta, readCdcState, type CdcState } from "../auto-cdc/cdc-state.ts";
import { DELETE_MARK } from "../auto-cdc/cdc-statements.ts";
import {
  commitStagedMerge,
  type BatchCommit,
  type BatchOptions,
  type SinkSession,
  type SinkTarget,
} from "../table-sink.ts";
import { SparkJobFailedError } from "./errors.ts";
import type { SparkCdcApplyRequest, SparkManifest } from "./spark-batch-contract.ts";
import type { SparkJobResult } from "./spark-batch.ts";
import type { SparkJobs } from "./spark-jobs.ts";
import { describeTable } from "./spark-state.ts";

/**
 * An AUTO CDC batch of SCD type 1 or 2 applied by the Spark job (functions/spark/ebb_spark_cdc_apply.py)
 * instead of in Ebb's function (auto-cdc/apply-changes.ts): Ebb plans, the job computes, Ebb commits.
 *
 * 1. `prepareSparkCdcApply`: the parent state version (its `cdc_keys` buckets and truncate sequence)
 *    and the target's live files, described to the job with the batch's apply time.
 * 2. The job merges the events with the touched keys' state, rewrites the target's files holding a
 *    touched key, writes the change feed's files and the next state buckets (under fresh names no
 *    version lists yet), and names them all in its manifest.
 * 3. `commitSparkCdcApply`: the layout the job applied under is checked as on DuckDB
 *    (cdc-compatibility.ts, `recordSparkCdcApply`), and the next state version's manifest written from the job's answer,
 *    before the table commit (table-sink.ts `commitStagedMerge`), which the caller makes with the
 *    batch's txn. A job that dies leaves only files nothing lists, which VACUUM removes.
 *
 * The job answers without `cdcApplied` when it cannot apply the batch (its own checks); the caller
 * then applies the staged events in DuckDB as before. So it does for an SCD type 2 state adopting
 * its table after a checkpoint reset (apply-changes.ts reads the table's versions then): `prepare`
 * answers undefined, and the job only stages the events.
 */

export interface SparkCdcApplyContext {
  /** The pipeline's store (bucket root view). */
  readonly store: ObjectStore;
  readonly pipelineId: string;
  readonly flow: string;
  readonly plan: AutoCdcFlowPlan;
  readonly parentVersion: string | undefined;
  readonly seq: number;
  readonly target: SinkTarget;
  /** The target's root as a URI the job reads. */
  readonly targetUri: string;
  readonly spark: SparkJobs;
  readonly now: number;
  readonly tombstoneGcSeconds: number;
}

export interface PreparedSparkCdcApply {
  readonly context: SparkCdcApplyContext;
  readonly state: CdcState;
  readonly version: StateVersion;
  /** The target's live files the job reads (paths as the log names them). */
  readonly read: readonly string[];
  readonly request: (stagingKey: string) => SparkCdcApplyRequest;
}

export async function prepareSparkCdcApply(
  context: SparkCdcApplyContext,
): Promise<PreparedSparkCdcApply | undefined> {
  const { plan, spark } = context;
  const { state, version } = await readCdcState(
    { store: context.store, pipelineId: context.pipelineId, flowId: context.flow },
    context.parentVersion,
  );
  const snapshot = await currentSnapshot(context.target.store).catch((error: unknown) => {
    if (error instanceof TableNotFoundError) return undefined;
    throw error;
  });
  const files = snapshot ? [...snapshot.files.values()] : [];
  // As micro-batch.ts `applyChangeBatch` decides it: a state that does not cover the table's rows.
  if (
    plan.scdType === 2 &&
    (state.meta.adopting === true || (context.parentVersion === undefined && files.length > 0))
  )
    return undefined;
  const root = context.targetUri.replace(/\/$/, "");
  return {
    context,
    state,
    version,
    read: files.map((file) => file.path),
    request: (stagingKey) => ({
      layout: {
        scdType: plan.scdType,
        keys: [...plan.keys],
        sequence: [...plan.sequenceBy],
        ignoreNullUpdates: plan.ignoreNullUpdates,
        ...(plan.trackHistoryColumnList ? { trackHistoryColumnList: [...plan.trackHistoryColumnList] } : {}),
        ...(plan.trackHistoryExceptColumnList
          ? { trackHistoryExceptColumnList: [...plan.trackHistoryExceptColumnList] }
          : {}),
      },
      truncate: state.meta.truncate?.json ?? null,
      nowMicros: context.now * 1000,
      expiredBeforeMicros: (context.now - context.tombstoneGcSeconds * 1000) * 1000,
      tieTypes: TIE_HASH_TYPES,
      state: {
        stateUri: spark.bucketUri(flowStatePrefix(context.pipelineId, context.flow)),
        stagingUri: spark.bucketUri(stagingKey),
        seq: context.seq,
        ...describeTable(version, CDC_TABLE, spark),
      },
      target: {
        columns: snapshot ? parseSchema(snapshot.metadata.schemaString).fields.map((f) => f.name) : null,
        partitioned: snapshot
          ? snapshot.metadata.partitionColumns.length > 0
          : (context.target.partitionBy ?? []).length > 0,
        deletionVectors: files.some(
          (file) => file.deletionVector !== undefined && file.deletionVector !== null,
        ),
        changeData: snapshot
          ? writesChangeData(snapshot)
          : (context.target.properties?.["delta.enableChangeDataFeed"] ?? "true") === "true",
        files: files.map((file) => ({ uri: `${root}/${dataFileKey(file.path)}`, path: file.path })),
      },
    }),
  };
}

/**
 * Step 3: the layout checked and the next state version written; returns its key. `canonicalType`
 * spells a DuckDB type as DuckDB does (the job spells a new table's events type its own way).
 */
export async function recordSparkCdcApply(
  prepared: PreparedSparkCdcApply,
  manifest: SparkManifest,
  jobId: string,
  canonicalType: (type: string) => Promise<string>,
): Promise<string | undefined> {
  const { context, state, version } = prepared;
  const applied = manifest.cdcApplied;
  const answered = manifest.state?.tables[CDC_TABLE];
  const failed = (why: string) => new SparkJobFailedError(context.flow, context.seq, jobId, why);
  if (!applied || !answered)
    throw failed(`its manifest has no ${CDC_TABLE} state for the changes it applied`);
  const layout = cdcLayout(context.flow, context.plan, applied.output);
  checkCdcLayout(
    { flow: context.flow, target: context.target.name, flows: [context.flow] },
    state.meta.layout,
    layout,
  );
  const columns = parseSchema(manifest.schemaString).fields.map((f) => f.name);
  const validity = layout.scdType === 2 ? [START_AT, END_AT] : [];
  if (columns.join("\u0000") !== [...layout.keys, ...layout.values, ...validity].join("\u0000"))
    throw failed(`it wrote the columns (${columns.join(", ")}), not the target's`);

  const canonical = async (columns: readonly { name: string; type: string }[]) =>
    Promise.all(columns.map(async (c) => ({ name: c.name, type: await canonicalType(c.type) })));
  const schema = { key: await canonical(answered.schema.key), value: await canonical(answered.schema.value) };
  // The stored shape decides, as on DuckDB: events of other types are refused by name.
  const table = version.table(CDC_TABLE, schema);
  if (table.shape.hash !== answered.hash || table.shape.buckets !== answered.buckets)
    throw failed(
      `it bucketed the ${CDC_TABLE} state by ${answered.hash} into ${answered.buckets}, not by the table's ${table.shape.hash} into ${table.shape.buckets}`,
    );
  const prefix = flowStatePrefix(context.pipelineId, context.flow);
  const writes = answered.writes.map((write) => ({
    bucket: write.bucket,
    kind: write.kind,
    rows: write.rows,
    ...(write.file ? { file: { key: `${prefix}${write.file.name}`, bytes: write.file.bytes } } : {}),
  }));
  const truncate = applied.truncate
    ? { json: applied.truncate, type: applied.sequenceType }
    : state.meta.truncate;
  const meta = nextCdcMeta(version.meta, {
    layout: storedLayoutOf(layout),
    ...(truncate ? { truncate } : {}),
  });
  // As the DuckDB apply's writer: a version only when something changed.
  const changed = writes.length > 0 || !table.stored || JSON.stringify(meta) !== JSON.stringify(version.meta);
  if (!changed) return version.key;
  const next: StateManifest = {
    format: STATE_FORMAT,
    seq: context.seq,
    parent: version.key ?? null,
    meta,
    tables: { ...version.manifest.tables, [CDC_TABLE]: nextTable(table.stored, table.shape, writes) },
  };
  return version.putManifest(next);
}

/**
 * Step 3 whole: the next state version written, then the job's files committed as the batch's MERGE
 * through Ebb's one commit path (table-sink.ts `commitStagedMerge`) with its txn.
 */
export async function commitSparkCdcApply(
  prepared: PreparedSparkCdcApply,
  job: SparkJobResult,
  commit: {
    readonly session: SinkSession;
    readonly txn: TxnMarker;
    readonly canonicalType: (type: string) => Promise<string>;
    readonly options: Pick<BatchOptions, "timestampFloor" | "afterDataFiles">;
  },
): Promise<BatchCommit & { readonly stateVersion: string | undefined }> {
  const { manifest } = job;
  const applied = manifest.cdcApplied;
  const stateVersion = await recordSparkCdcApply(prepared, manifest, job.jobId, commit.canonicalType);
  const { target, plan } = prepared.context;
  const now = commit.session.clock();
  const committed = await commitStagedMerge(
    { ...target, properties: { "delta.enableChangeDataFeed": "true", ...target.properties } },
    commit.session,
    {
      schema: parseSchema(manifest.schemaString),
      adds: manifest.files.map((file) => ({
        path: toLogPath(file.path),
        partitionValues: {},
        size: file.size,
        modificationTime: now,
        dataChange: true,
        stats: file.stats,
      })),
      read: prepared.read,
      removes: manifest.removes ?? [],
      changeData: (manifest.changeData ?? []).map((f) => ({ path: toLogPath(f.path), size: f.size })),
      on: plan.scdType === 2 ? [...plan.keys, START_AT] : plan.keys,
      deleteMark: DELETE_MARK,
      metrics: { ...applied!.rows, copied: applied!.copied },
    },
    commit.txn,
    commit.options,
  );
  return { ...committed, stateVersion };
}
