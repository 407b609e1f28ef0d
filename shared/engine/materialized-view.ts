import { quoteLiteral } from "../duck/sql-text.ts";
import { currentSnapshot, type Snapshot, statsRecordCount, TableNotFoundError } from "../delta/index.ts";
import type { MaterializedViewDefinition } from "../pipeline/definition-schema.ts";
import type { IncrementalViewPlan } from "../pipeline/plan/index.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import type { DatasetCatalog, SnapshotRead } from "./dataset-catalog.ts";
import { openStateVersion, type StateFlow } from "../state/index.ts";
import {
  aggregateView,
  chooseIncremental,
  type IncrementalChoice,
  type RefreshKind,
  restoredRefreshCurrent,
  VIEW_INPUTS_PARAMETER,
  VIEW_STATE_PARAMETER,
  type ViewInputs,
} from "./incremental-view.ts";
import { Sandbox } from "./sandbox.ts";
import { applyViewExpectations, type DataQuality } from "./expectations.ts";
import { loadReadSnapshots, registerSnapshotViews } from "./snapshot-views.ts";
import { overwriteTable, type DescribedColumn, type SinkSession } from "./table-sink.ts";
import type { UpdateFence } from "./update-fence.ts";
import type { BatchEngine } from "../pipeline/pipeline-settings.ts";
import { FlowNotSupportedOnSparkError, SparkEngineNotConfiguredError } from "./spark/errors.ts";
import type { SparkJobs } from "./spark/spark-jobs.ts";
import { recomputeViewOnSpark } from "./spark/spark-view-refresh.ts";
import { chooseViewEngine } from "./spark/view-engine-choice.ts";
import { describeViewForSpark, sparkOutputSchema, type DescribedView } from "./spark/spark-view-schema.ts";
import { batchBytesFromEnv } from "./task-sizing.ts";

/**
 * Refreshing a materialized view: its SQL runs in the sandbox over the current snapshots of what it
 * reads, and the result replaces the table's contents in one commit (an overwrite), stamped at least
 * 1 ms after the newest input commit so the view's history lines up causally with its inputs.
 *
 * 1. Load the current snapshot of every input table and of the view's own table.
 * 2. The refresh's inputs: the view's definition, the SQL of each view it reads and the exact
 *    `metaData.id` and version of each table it reads.
 * 3. When the view's latest commit is a refresh from those same inputs, its contents are already what
 *    the SQL would produce: nothing to do. So too after a RESTORE of the view (a rewind) when the
 *    refresh it brought back read tables that have not gained or lost a row since.
 * 4. A GROUP BY of decomposable aggregates over one input table is kept incrementally
 *    (incremental-view.ts): from the rows the input gained since the refresh the view's contents come
 *    from, merged into that refresh's partial aggregates. Anything else, and whenever the input did
 *    more than gain rows, the view's definition changed or its table was reset, recomputes from all
 *    rows (FULL_RECOMPUTE), with the reason.
 *    A full recompute runs on Spark when the update's engine says so (spark/view-engine-choice.ts):
 *    the job computes the rows over the same snapshots' files (and a view kept incrementally, its
 *    partials in Ebb's state layout) and Ebb commits them as step 5 does (spark/spark-view-refresh.ts);
 *    an incremental refresh stays here.
 * 5. Overwrite, recording the inputs (and the state version, step 4) in the commit's
 *    `operationParameters`.
 */

export { VIEW_INPUTS_PARAMETER } from "./incremental-view.ts";

export interface ViewRefresh {
  readonly rows: number;
  readonly tableVersion: number;
  readonly committedAt: number;
  readonly durationMs: number;
  /** False when the view's inputs were unchanged since its last refresh: nothing was recomputed. */
  readonly recomputed: boolean;
  /** Which way it refreshed (absent when nothing was recomputed), and why. */
  readonly refresh?: RefreshKind;
  readonly reason: string;
  /** The view's expectations over the refreshed rows, when it has any. */
  readonly dataQuality?: DataQuality;
  /** The engine that recomputed it (spark/view-engine-choice.ts), and its Spark job's id. */
  readonly engine: BatchEngine;
  readonly sparkJobId?: string;
  /** Under `auto`, why a recompute that could have gone to Spark stayed on DuckDB. */
  readonly keptOffSpark?: string;
}

/** The Spark engine, where one is configured, and the update's own engine. */
export interface ViewEngines {
  readonly spark?: SparkJobs | undefined;
  readonly engine?: BatchEngine | undefined;
}

/** `fence` is the update's (update-fence.ts), asked right before the overwrite commits. */
export async function refreshMaterializedView(
  view: MaterializedViewDefinition,
  catalog: DatasetCatalog,
  session: SinkSession,
  fence: UpdateFence,
  pipelineId: string,
  engines: ViewEngines = {},
): Promise<ViewRefresh> {
  const started = session.clock();
  const store = catalog.tableStore(view.name);
  const reads = catalog.snapshotReads(view.name);
  // The inputs' snapshots and the view's own at once: independent reads of different logs.
  const [snapshots, current] = await Promise.all([loadReadSnapshots(reads), latestSnapshot(store)]);
  const inputs = viewInputs(view, reads, snapshots);
  const inputsText = JSON.stringify(inputs);
  const recorded = current?.commitInfo?.operationParameters?.[VIEW_INPUTS_PARAMETER];
  const unchanged =
    current && recorded === inputsText
      ? "its inputs are at the versions its last refresh read"
      : current?.commitInfo?.operation === "RESTORE"
        ? await restoredRefreshCurrent({
            viewStore: store,
            current,
            inputs,
            reads,
            snapshots,
            flowId: viewStateFlowId(view.name),
          })
        : undefined;
  if (current && unchanged !== undefined) {
    return {
      rows: rowCount(current),
      tableVersion: current.version,
      committedAt: current.timestamp,
      durationMs: session.clock() - started,
      recomputed: false,
      reason: unchanged,
      engine: "duckdb",
    };
  }
  const plan = catalog.viewPlan(view.name);
  const seq = current ? current.version + 1 : 0;
  const tables = reads.filter((r) => r.kind === "table");
  // Step 4's way, which decides the engine: a full recompute may run on Spark, an incremental refresh not.
  let kept: KeptIncrementally | undefined;
  let choice: { refresh: RefreshKind; reason: string };
  if (plan.kind === "recompute") choice = { refresh: "FULL_RECOMPUTE", reason: plan.reason };
  else {
    const read = tables.find((r) => r.name.toLowerCase() === plan.input)!;
    const inputSnapshot = snapshots.get(read.name)!;
    const flow = { pipelineId, flowId: viewStateFlowId(view.name) };
    const chosen = await chooseIncremental({
      viewStore: store,
      current,
      inputs,
      plan,
      read,
      inputSnapshot,
      stateStore: catalog.store,
      flow,
    });
    kept = { plan, read, inputSnapshot, flow, chosen };
    choice = chosen;
  }
  const engine = await viewEngine(view, catalog, reads, snapshots, engines, kept, session.signal);
  if (engine.engine === "spark") {
    const recomputed = await recomputeViewOnSpark({
      view,
      flowId: viewStateFlowId(view.name),
      pipelineId,
      catalog,
      session,
      spark: engines.spark!,
      reads,
      snapshots,
      seq,
      outputSchema: sparkOutputSchema(view, engine.described),
      extraParameters: { [VIEW_INPUTS_PARAMETER]: inputsText },
      beforeCommit: () => fence(`the refresh of materialized view "${view.name}"`),
      ...(kept
        ? {
            partials: {
              store: catalog.store,
              flow: kept.flow,
              plan: kept.plan,
              inputSnapshot: kept.inputSnapshot,
              seq,
            },
          }
        : {}),
    });
    return {
      rows: recomputed.rows,
      tableVersion: recomputed.version,
      committedAt: recomputed.timestamp,
      durationMs: session.clock() - started,
      recomputed: true,
      refresh: "FULL_RECOMPUTE",
      reason: choice.reason,
      ...(recomputed.dataQuality ? { dataQuality: recomputed.dataQuality } : {}),
      engine: "spark",
      sparkJobId: recomputed.jobId,
    };
  }
  const sandbox = await Sandbox.open({
    namespace: catalog.namespace,
    signal: session.signal,
    owner: `materialized view "${view.name}"`,
  });
  try {
    // The refreshed rows as a SELECT in the sandbox: the overwrite writes them from there.
    let output: {
      sql: string;
      rows: number;
      stateVersion?: string | undefined;
      columns?: readonly DescribedColumn[];
    };
    let newestInput: number | undefined;
    if (kept) {
      const { chosen, inputSnapshot } = kept;
      newestInput = inputSnapshot.timestamp;
      output = await aggregateView({
        sandbox,
        plan: kept.plan,
        what: `materialized view "${view.name}"`,
        read: kept.read,
        inputSnapshot,
        state:
          chosen.refresh === "INCREMENTAL"
            ? chosen.state
            : await openStateVersion({ store: catalog.store, flow: kept.flow }),
        files: chosen.refresh === "INCREMENTAL" ? chosen.files : inputSnapshot.files.values(),
        seq,
      });
    } else {
      newestInput = await registerSnapshotViews(sandbox, reads, snapshots);
      const exported = await sandbox.exportUserQuery(view.sql, `materialized view "${view.name}"`);
      output = { sql: `SELECT * FROM read_parquet(${quoteLiteral(exported.path)})`, rows: exported.rows };
    }
    // The view's expectations see the refreshed rows before the overwrite (expectations.ts).
    const checked = await applyViewExpectations(
      sandbox,
      { dataset: view.name, flow: view.name, expectations: view.expectations },
      output,
    );
    // Rows the expectations rewrote are described again by the overwrite.
    const columns = checked.sql === output.sql ? output.columns : undefined;
    output = { ...output, sql: checked.sql, rows: checked.rows };
    const committed = await overwriteTable(
      {
        store,
        name: view.name,
        ...(view.partition_by ? { partitionBy: view.partition_by } : {}),
        ...(view.properties ? { properties: view.properties } : {}),
      },
      session,
      output.sql,
      {
        rowsSession: await sandbox.writer(),
        ...(columns ? { columns } : {}),
        ...(newestInput === undefined ? {} : { timestampFloor: newestInput + 1 }),
        extraParameters: {
          [VIEW_INPUTS_PARAMETER]: inputsText,
          ...(output.stateVersion ? { [VIEW_STATE_PARAMETER]: output.stateVersion } : {}),
        },
        beforeCommit: () => fence(`the refresh of materialized view "${view.name}"`),
      },
    );
    return {
      rows: output.rows,
      tableVersion: committed.version,
      committedAt: committed.timestamp,
      durationMs: session.clock() - started,
      recomputed: true,
      ...choice,
      ...(checked.quality ? { dataQuality: checked.quality } : {}),
      engine: "duckdb",
      ...(engine.keptOffSpark !== undefined ? { keptOffSpark: engine.keptOffSpark } : {}),
    };
  } finally {
    await sandbox.close();
  }
}

/** A view kept incrementally: step 4's way, and what it reads. */
interface KeptIncrementally {
  readonly plan: IncrementalViewPlan;
  readonly read: Extract<SnapshotRead, { kind: "table" }>;
  readonly inputSnapshot: Snapshot;
  readonly flow: StateFlow;
  readonly chosen: IncrementalChoice;
}

/** The state folder of a materialized view (a flow id no streaming flow can have: dataset names hold no dot). */
export function viewStateFlowId(view: string): string {
  return `view.${view}`;
}

/**
 * The engine of the view's recompute; a refusal, or Spark where none is configured, is its error.
 * Before Spark is chosen, DuckDB describes the view (spark/spark-view-schema.ts): its grouping keys'
 * types may keep it off Spark, and its columns are the types the job casts to.
 */
async function viewEngine(
  view: MaterializedViewDefinition,
  catalog: DatasetCatalog,
  reads: readonly SnapshotRead[],
  snapshots: ReadonlyMap<string, Snapshot>,
  engines: ViewEngines,
  kept: KeptIncrementally | undefined,
  signal: AbortSignal | undefined,
): Promise<
  | { readonly engine: "spark"; readonly described: DescribedView }
  | { readonly engine: "duckdb"; readonly keptOffSpark?: string }
> {
  let inputBytes = 0;
  for (const snapshot of snapshots.values())
    for (const file of snapshot.files.values()) inputBytes += file.size;
  const question = {
    setting: catalog.pipeline.settings.engine,
    override: engines.engine,
    pipeline: catalog.pipeline.definition,
    view,
    readViews: reads.flatMap((read) => (read.kind === "view" ? [read] : [])),
    incrementalRefresh: kept?.chosen.refresh === "INCREMENTAL",
    inputBytes,
    functionBatchBytes: batchBytesFromEnv(),
  };
  let choice = chooseViewEngine(question);
  let described: DescribedView | undefined;
  if (choice.engine === "spark") {
    if (!engines.spark) throw new SparkEngineNotConfiguredError(view.name, "materialized view");
    described = await describeViewForSpark(view, catalog, reads, snapshots, kept?.plan, signal);
    choice = chooseViewEngine({ ...question, keys: described.keys });
  }
  if (choice.engine === "refused")
    throw new FlowNotSupportedOnSparkError(view.name, choice.reason, "materialized view", choice.wayOut);
  if (choice.engine === "spark") return { engine: "spark", described: described! };
  return choice;
}

/** The view's rows: what its refresh wrote, or after a RESTORE the rows its files' stats count. */
function rowCount(current: Snapshot): number {
  const written = current.commitInfo?.operationMetrics?.["numOutputRows"];
  if (written !== undefined) return Number(written);
  let rows = 0;
  for (const file of current.files.values()) {
    rows += statsRecordCount(file.stats) ?? 0;
  }
  return rows;
}

async function latestSnapshot(store: ObjectStore): Promise<Snapshot | undefined> {
  try {
    return await currentSnapshot(store);
  } catch (error) {
    if (error instanceof TableNotFoundError) return undefined;
    throw error;
  }
}

/** Step 2 (recorded in the refresh commit as a JSON string, compared as a whole). */
function viewInputs(
  view: MaterializedViewDefinition,
  reads: readonly SnapshotRead[],
  snapshots: ReadonlyMap<string, Snapshot>,
): ViewInputs {
  return {
    view: {
      sql: view.sql,
      partition_by: view.partition_by ?? null,
      properties: view.properties ?? null,
      // Changed expectations change what is written; none keeps the inputs of earlier refreshes.
      ...(view.expectations ? { expectations: view.expectations } : {}),
    },
    reads: reads.map((read) => {
      if (read.kind === "view") return { view: read.name, sql: read.sql };
      const snapshot = snapshots.get(read.name)!;
      return { table: read.name, id: snapshot.metadata.id, version: snapshot.version };
    }),
  };
}
