import type { FlowDefinition } from "../../pipeline/definition-schema.ts";
import type { FlowPlan } from "../../pipeline/plan/index.ts";
import { flowStatePrefix } from "../../store/bucket-layout.ts";
import { DEFAULT_BUCKETS, type StateFlow, type StateVersion } from "../../state/index.ts";
import { nextTable, snapshotDue, type BucketWrite, type StateManifest } from "../../state/state-manifest.ts";
import { manifestMetrics, STATE_FORMAT } from "../../state/state-manifest.ts";
import { DEDUP_TABLE } from "../stateful/deduplicate.ts";
import { checkWindowState, WINDOWS_TABLE } from "../stateful/window-aggregation.ts";
import { WINDOW_START, type JoinFlowPlan } from "../../pipeline/plan/index.ts";
import {
  checkJoinState,
  JOIN_LEFT_TABLE,
  JOIN_RIGHT_TABLE,
  joinWatermarksSchema,
} from "../stateful/stream-join.ts";
import { sparkTextOfDeparsed } from "./spark-window-sql.ts";
import { operatorSignature } from "../stateful/operator-signature.ts";
import { DEFINITION_META, definitionSignature } from "../stateful/state-definition.ts";
import {
  openFlowState,
  STATE_OPERATOR_NAMES,
  type StateOperatorName,
  type StateProgress,
} from "../stateful/stateful-batch.ts";
import { describeWatermark, watermarkMetaSchema } from "../stateful/watermark.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { SparkJobFailedError } from "./errors.ts";
import {
  JOIN_OUTPUT_VIEW,
  type SparkStateRequest,
  type SparkStateResult,
  type SparkStateTable,
} from "./spark-batch-contract.ts";
import type { SparkJobs } from "./spark-jobs.ts";

/**
 * A stateful flow's batch on Spark (functions/spark/ebb_spark_state.py, and ebb_spark_join.py for a
 * stream-stream join): the watermark, deduplication, windows and joins, over the same state versions
 * the DuckDB engine reads and writes (stateful-batch.ts), so a flow can switch engines between
 * batches and a rewind across a switch restores the state as any rewind does.
 *
 * 1. `prepareSparkState`: open the parent version (checked against the flow's operators, as on
 *    DuckDB) and describe it to the job: the watermark it left, the dedup table's buckets and files,
 *    the buckets due a snapshot.
 * 2. The job reads the buckets it needs, applies the batch and writes one file per touched bucket into
 *    the flow's state folder, under fresh names no version lists yet.
 * 3. `recordSparkState`: Ebb writes the next version's manifest from the job's answer (the store's
 *    own planning, state-manifest.ts `nextTable`; a table of another shape is refused as on DuckDB),
 *    before the batch's commit; the checkpoint names it when the batch commits. A job that dies leaves
 *    only files no manifest lists, which the state's VACUUM removes.
 */

export interface SparkStateContext {
  readonly store: ObjectStore;
  readonly flow: StateFlow;
  readonly definition: FlowDefinition;
  readonly plan: FlowPlan;
  readonly parentVersion: string | undefined;
  readonly seq: number;
  readonly spark: SparkJobs;
}

export interface PreparedSparkState {
  readonly version: StateVersion;
  readonly request: (stagingKey: string) => SparkStateRequest;
  /** The SQL the job runs instead of the flow's (a windowed flow's, over the windows it completes). */
  readonly sql?: string;
}

export async function prepareSparkState(context: SparkStateContext): Promise<PreparedSparkState> {
  const { plan, definition, spark } = context;
  const version = await openFlowState(context.store, context.flow, definition, context.parentVersion);
  if (plan.kind === "windowed") checkWindowState(version, definition.name, plan.stateSignature);
  if (plan.kind === "join") checkJoinState(version, definition.name, plan.stateSignature);
  const mark = watermarkOf(plan);
  const dedup = plan.kind === "dedup" || plan.kind === "windowed" ? plan.dedup : undefined;
  const described = (name: string) => describeTable(version, name, spark);
  const previous = watermarkMetaSchema.safeParse(version.meta["watermark"]);
  return {
    version,
    request: (stagingKey) => ({
      stateUri: spark.bucketUri(flowStatePrefix(context.flow.pipelineId, context.flow.flowId)),
      stagingUri: spark.bucketUri(stagingKey),
      seq: context.seq,
      watermark: mark
        ? {
            column: mark.column,
            delayMicros: mark.delayMicros,
            previousMicros: previous.success ? previous.data.micros : null,
          }
        : null,
      dedup: dedup
        ? { keys: dedup.keys, withinWatermark: dedup.withinWatermark, ...described(DEDUP_TABLE) }
        : null,
      window:
        plan.kind === "windowed"
          ? {
              ...plan.window,
              partialSql: sparkTextOfDeparsed(plan.partialSql),
              groupKeys: plan.groupKeys.length,
              aggregates: plan.aggregates.map((a) => ({ kind: a.kind })),
              ...described(WINDOWS_TABLE),
            }
          : null,
      join: plan.kind === "join" ? joinRequest(plan, version, described) : null,
    }),
    ...(plan.kind === "windowed" ? { sql: sparkTextOfDeparsed(plan.finalSql) } : {}),
    ...(plan.kind === "join" ? { sql: `SELECT * FROM ${JOIN_OUTPUT_VIEW}` } : {}),
  };
}

/**
 * A stream-stream join as the job runs it (stream-join.ts's steps): the compiled plan's SQL printed as
 * Spark SQL, each side's watermark and the one the parent left, and both sides' waiting rows.
 */
function joinRequest(
  plan: JoinFlowPlan,
  version: StateVersion,
  described: (name: string) => ReturnType<typeof describeTable>,
): NonNullable<SparkStateRequest["join"]> {
  const previous = joinWatermarksSchema.safeParse(version.meta["join_watermarks"]);
  const side = (mark: JoinFlowPlan["leftWatermark"]) => ({
    column: mark.column,
    delayMicros: mark.delayMicros,
  });
  return {
    type: plan.type,
    stream: plan.stream,
    left: side(plan.leftWatermark),
    right: side(plan.rightWatermark),
    previous: previous.success ? previous.data : {},
    range: plan.range,
    sql: sparkTextOfDeparsed(plan.sql),
    innerSql: sparkTextOfDeparsed(plan.innerSql),
    matchSql: sparkTextOfDeparsed(plan.matchSql),
    leftTable: described(JOIN_LEFT_TABLE),
    rightTable: described(JOIN_RIGHT_TABLE),
  };
}

/** The watermark the flow's operators keep (a join keeps its own: each side's, and the lower). */
function watermarkOf(plan: FlowPlan) {
  return plan.kind === "plain" || plan.kind === "dedup" || plan.kind === "windowed"
    ? plan.watermark
    : undefined;
}

/** A state table of the parent version as the job reads it: its files as URIs, the buckets due a snapshot. */
export function describeTable(
  version: StateVersion,
  name: string,
  spark: SparkJobs,
): { stored: SparkStateTable | null; buckets: number; snapshotDue: number[] } {
  const stored = version.manifest.tables[name];
  return {
    stored: stored
      ? {
          schema: stored.schema,
          buckets: stored.buckets,
          hash: stored.hash ?? "md5-json",
          parts: Object.fromEntries(
            Object.entries(stored.parts).map(([bucket, part]) => [
              bucket,
              {
                files: [...(part.snapshot ? [part.snapshot] : []), ...part.changelogs].map((f) =>
                  spark.bucketUri(f.key),
                ),
                rows: part.rows,
                ...(part.minTime !== undefined ? { minTime: part.minTime } : {}),
              },
            ]),
          ),
        }
      : null,
    buckets: DEFAULT_BUCKETS,
    snapshotDue: Object.entries(stored?.parts ?? {})
      .filter(([, part]) => snapshotDue(part))
      .map(([bucket]) => Number(bucket)),
  };
}

/** Step 3: the next state version from the job's answer, and the batch's `stateOperators`. */
export async function recordSparkState(
  context: SparkStateContext,
  version: StateVersion,
  result: SparkStateResult,
  jobId: string,
): Promise<StateProgress> {
  const { definition, plan } = context;
  const meta: Record<string, unknown> = { ...version.meta };
  let changed = false;
  const setMeta = (name: string, value: unknown) => {
    if (JSON.stringify(meta[name]) === JSON.stringify(value)) return;
    meta[name] = value;
    changed = true;
  };
  setMeta("operators", operatorSignature(definition));
  setMeta(DEFINITION_META, definitionSignature(definition));
  if (plan.kind === "windowed") setMeta("window", plan.stateSignature);
  const mark = watermarkOf(plan);
  const watermark = result.watermarkMicros ?? undefined;
  if (mark && watermark !== undefined) setMeta("watermark", { column: mark.column, micros: watermark });
  if (plan.kind === "join") {
    // As stream-join.ts keeps them: the join's signature, each side's watermark, the join's (the lower).
    if (!result.join)
      throw new SparkJobFailedError(
        definition.name,
        context.seq,
        jobId,
        "it answered no join for the join's state",
      );
    setMeta("join", plan.stateSignature);
    setMeta("join_watermarks", result.join.watermarks);
    if (watermark !== undefined)
      setMeta("watermark", { column: plan.leftWatermark.column, micros: watermark });
  }

  const tables = { ...version.manifest.tables };
  const prefix = flowStatePrefix(context.flow.pipelineId, context.flow.flowId);
  const dedup = plan.kind === "dedup" || plan.kind === "windowed" ? plan.dedup : undefined;
  // Each table the flow's operators keep, with its time column (as the DuckDB engine opens it).
  const kept = new Map<string, { timeColumn?: string }>();
  if (dedup) kept.set(DEDUP_TABLE, dedup.withinWatermark && mark ? { timeColumn: "event_time" } : {});
  if (plan.kind === "windowed") kept.set(WINDOWS_TABLE, { timeColumn: WINDOW_START });
  if (plan.kind === "join") for (const name of [JOIN_LEFT_TABLE, JOIN_RIGHT_TABLE]) kept.set(name, {});
  for (const [name, answered] of Object.entries(result.tables)) {
    const options = kept.get(name);
    if (!options)
      throw new SparkJobFailedError(
        definition.name,
        context.seq,
        jobId,
        `it wrote a state table ${name} the flow has not`,
      );
    // The stored shape decides, as on DuckDB: a key of another type is refused by name.
    const table = version.table(name, answered.schema, options);
    if (table.shape.hash !== answered.hash || table.shape.buckets !== answered.buckets)
      throw new SparkJobFailedError(
        definition.name,
        context.seq,
        jobId,
        `it bucketed the ${name} state by ${answered.hash} into ${answered.buckets}, not by the table's ${table.shape.hash} into ${table.shape.buckets}`,
      );
    const writes = answeredWrites(prefix, answered);
    if (writes.length > 0 || !table.stored) changed = true;
    tables[name] = nextTable(table.stored, table.shape, writes);
  }
  let key = version.key;
  let manifest = version.manifest;
  if (changed) {
    manifest = {
      format: STATE_FORMAT,
      seq: context.seq,
      parent: version.key ?? null,
      meta,
      tables,
    } satisfies StateManifest;
    key = await version.putManifest(manifest);
  }
  const metrics = manifestMetrics(manifest);
  const operators: StateOperatorName[] = [];
  if (dedup)
    operators.push(
      dedup.withinWatermark && mark
        ? STATE_OPERATOR_NAMES.dedupeWithinWatermark
        : STATE_OPERATOR_NAMES.dedupe,
    );
  if (plan.kind === "windowed") operators.push(STATE_OPERATOR_NAMES.windowAggregation);
  if (plan.kind === "join") operators.push(STATE_OPERATOR_NAMES.join);
  const joined = plan.kind === "join" ? result.join : undefined;
  return {
    version: key,
    operators,
    numRowsTotal: metrics.rows,
    stateBytes: metrics.bytes,
    numRowsDroppedByWatermark: result.dropped,
    numDuplicatesDropped: result.duplicates,
    numWindowsEmitted: result.windowsEmitted ?? 0,
    ...(joined ? { numJoinedRows: joined.pairs } : {}),
    ...(joined && plan.kind === "join" && plan.type === "left"
      ? { numLeftOuterRows: joined.leftOuterRows ?? 0 }
      : {}),
    ...(watermark !== undefined
      ? { watermarkMicros: watermark, watermark: describeWatermark(watermark)! }
      : {}),
  };
}

/** The bucket writes a job answered for a state table, its files named by key in the state folder. */
export function answeredWrites(prefix: string, answered: SparkStateResult["tables"][string]): BucketWrite[] {
  return answered.writes.map((write) => ({
    bucket: write.bucket,
    kind: write.kind,
    rows: write.rows,
    ...(write.minTime !== undefined ? { minTime: write.minTime } : {}),
    ...(write.file ? { file: { key: `${prefix}${write.file.name}`, bytes: write.file.bytes } } : {}),
  }));
}
