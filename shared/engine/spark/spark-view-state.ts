import type { Snapshot } from "../../delta/index.ts";
import type { IncrementalViewPlan } from "../../pipeline/plan/index.ts";
import { flowStatePrefix } from "../../store/bucket-layout.ts";
import { DEFAULT_BUCKETS, openStateVersion, type StateFlow } from "../../state/index.ts";
import { nextTable, STATE_FORMAT, type StateManifest } from "../../state/state-manifest.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { GROUPS_TABLE, viewStateMeta } from "../incremental-view.ts";
import { SparkJobFailedError } from "./errors.ts";
import type { SparkStateRequest, SparkStateResult } from "./spark-batch-contract.ts";
import type { SparkJobs } from "./spark-jobs.ts";
import { answeredWrites } from "./spark-state.ts";
import { sparkTextOfDeparsed } from "./spark-window-sql.ts";

/**
 * The partials of a materialized view kept incrementally, when Spark recomputes it in full
 * (spark-view-refresh.ts; functions/spark/ebb_spark_view.py): the state version incremental-view.ts
 * writes on a full recompute, written by the job's files and Ebb's manifest, so the next refresh on
 * DuckDB continues from it.
 *
 * 1. `sparkViewState`: the job's request (the view's compiled partial and final SQL as Spark SQL, the
 *    buckets of a new `groups` table) — a full recompute starts from no state.
 * 2. The job merges the partials per key and writes one snapshot file per bucket into the view's
 *    state folder, bucketed by the hash DuckDB computes over the same key.
 * 3. `recordSparkViewState`: Ebb writes the version's manifest (no parent; the meta that says what the
 *    partials mean), checking the job bucketed as the table's shape says, before the view's commit
 *    names it. A job that dies leaves files no manifest lists, which the state's VACUUM removes.
 */

export interface SparkViewStateContext {
  readonly store: ObjectStore;
  readonly flow: StateFlow;
  readonly plan: IncrementalViewPlan;
  /** The input's snapshot the recompute reads (its schema is part of what the partials mean). */
  readonly inputSnapshot: Snapshot;
  readonly seq: number;
}

/** Step 1: the job's state request (given its staging key) and the SQL it runs for the view's rows. */
export function sparkViewState(
  context: SparkViewStateContext,
  spark: SparkJobs,
): { readonly request: (stagingKey: string) => SparkStateRequest; readonly sql: string } {
  const { plan } = context;
  return {
    request: (stagingKey) => ({
      stateUri: spark.bucketUri(flowStatePrefix(context.flow.pipelineId, context.flow.flowId)),
      stagingUri: spark.bucketUri(stagingKey),
      seq: context.seq,
      watermark: null,
      dedup: null,
      view: {
        partialSql: sparkTextOfDeparsed(plan.partialSql),
        groupKeys: plan.groupKeys.length,
        aggregates: plan.aggregates.map((a) => ({ kind: a.kind })),
        buckets: DEFAULT_BUCKETS,
      },
    }),
    sql: sparkTextOfDeparsed(plan.finalSql),
  };
}

/** Step 3: the state version's key. */
export async function recordSparkViewState(
  context: SparkViewStateContext,
  result: SparkStateResult | undefined,
  jobId: string,
): Promise<string> {
  const fail = (why: string) => new SparkJobFailedError(context.plan.view, context.seq, jobId, why);
  const answered = result?.tables[GROUPS_TABLE];
  if (!answered) throw fail(`it answered no ${GROUPS_TABLE} state for the view's partials`);
  const extra = Object.keys(result.tables).find((name) => name !== GROUPS_TABLE);
  if (extra) throw fail(`it wrote a state table ${extra} the view has not`);
  const empty = await openStateVersion({ store: context.store, flow: context.flow });
  const table = empty.table(GROUPS_TABLE, answered.schema);
  if (table.shape.hash !== answered.hash || table.shape.buckets !== answered.buckets)
    throw fail(
      `it bucketed the ${GROUPS_TABLE} state by ${answered.hash} into ${answered.buckets}, not by the table's ${table.shape.hash} into ${table.shape.buckets}`,
    );
  const prefix = flowStatePrefix(context.flow.pipelineId, context.flow.flowId);
  const manifest: StateManifest = {
    format: STATE_FORMAT,
    seq: context.seq,
    parent: null,
    meta: viewStateMeta(context.plan, context.inputSnapshot),
    tables: { [GROUPS_TABLE]: nextTable(undefined, table.shape, answeredWrites(prefix, answered)) },
  };
  return empty.putManifest(manifest);
}
