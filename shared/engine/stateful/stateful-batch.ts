import { quoteIdentifier } from "../../duck/sql-text.ts";
import type { FlowDefinition } from "../../pipeline/definition-schema.ts";
import {
  IncompatibleStateError,
  openStateVersion,
  type StateFlow,
  type StateVersion,
  type StateWriter,
} from "../../state/index.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { DEFINITION_META, definitionSignature } from "./state-definition.ts";
import { StatefulColumnError } from "../errors.ts";
import type { FlowPlan, JoinFlowPlan } from "../../pipeline/plan/index.ts";
import { joinStreams } from "./stream-join.ts";
import { MICRO_BATCH_NAME as SOURCE_TABLE } from "../../pipeline/dataset-references.ts";
import type { Sandbox } from "../sandbox.ts";
import { deduplicate } from "./deduplicate.ts";
import { aggregateWindows } from "./window-aggregation.ts";
import {
  operatorSignature,
  sameSignature,
  signatureSchema,
  describeSignature,
} from "./operator-signature.ts";
import {
  advanceWatermark,
  describeWatermark,
  eventTimeSql,
  lateSql,
  watermarkMetaSchema,
} from "./watermark.ts";

/**
 * The stateful operators of one micro-batch, between reading `source` and running the flow's SQL:
 *
 * 1. Open the state version the parent checkpoint names (empty at the root or after a reset) and
 *    check that it was written by the same operators (keys, watermark column).
 * 2. Number the batch's rows in arrival order, so every choice below is the same on a retry.
 * 3. Watermark: drop (and count) the rows older than the parent's watermark; advance it from the rest.
 * 4. Deduplicate: keep the first row of each key not seen in the state; remember the new keys; let go
 *    of keys whose event time plus the delay the parent's watermark has reached (within_watermark,
 *    as Spark).
 * 5. `source` becomes the surviving rows, in arrival order (steps 3 and 4 filter the numbered rows,
 *    and a filter keeps their order: no sort), for the flow's SQL; a windowed aggregation instead
 *    adds them to its open windows and gives the SQL of the windows it completes.
 * 6. Write the next state version (files, then its manifest); the batch's checkpoint names it when
 *    it commits, so a rewind to that checkpoint restores exactly this state.
 */

export interface StatefulBatchContext {
  readonly sandbox: Sandbox;
  readonly store: ObjectStore;
  readonly flow: StateFlow;
  readonly definition: FlowDefinition;
  /** What the flow runs, compiled when its definition was validated. */
  readonly plan: FlowPlan;
  /** The parent checkpoint's state version. */
  readonly parentVersion?: string;
  readonly seq: number;
}

/**
 * The stateful operators a flow runs, by the `operatorName` Spark gives them in `stateOperators`
 * (a flow with only a watermark runs none: it keeps just the watermark).
 */
export const STATE_OPERATOR_NAMES = {
  dedupe: "dedupe",
  dedupeWithinWatermark: "dedupeWithinWatermark",
  windowAggregation: "stateStoreSave",
  join: "symmetricHashJoin",
} as const;
export type StateOperatorName = (typeof STATE_OPERATOR_NAMES)[keyof typeof STATE_OPERATOR_NAMES];

/** What a batch's operators did: the `stateOperators` a Spark user reads in progress. */
export interface StateProgress {
  /** The state version the batch's checkpoint names. */
  readonly version: string | undefined;
  /** The operators that ran, in order. */
  readonly operators: readonly StateOperatorName[];
  readonly numRowsTotal: number;
  readonly stateBytes: number;
  readonly numRowsDroppedByWatermark: number;
  readonly numDuplicatesDropped: number;
  /** Windows a windowed aggregation completed (and appended) in this batch. */
  readonly numWindowsEmitted: number;
  /** A stream-stream join: the pairs it matched, and the unmatched left rows it wrote (LEFT OUTER). */
  readonly numJoinedRows?: number;
  readonly numLeftOuterRows?: number;
  /** The SQL whose rows the batch appends, when the operators replace the flow's own (windows). */
  readonly query?: string;
  /** Epoch µs after the batch; undefined when the flow has no watermark or has seen no event yet. */
  readonly watermarkMicros?: number;
  readonly watermark?: string;
}

const ROW = "__ebb_row";
const INPUT = "__ebb_stateful_in";
const KEPT = "__ebb_stateful_kept";
const JOINED_INPUT = "__ebb_stateful_joined_in";

/** Whether the flow keeps operator state (and so runs `runStatefulOperators`). */
export function isStatefulFlow(flow: FlowDefinition): boolean {
  return flow.watermark !== undefined || flow.drop_duplicates !== undefined || flow.join !== undefined;
}

/** The state version a batch starts from, checked against the flow's operators. */
export async function openFlowState(
  store: ObjectStore,
  flow: StateFlow,
  definition: FlowDefinition,
  parentVersion: string | undefined,
): Promise<StateVersion> {
  const version = await openStateVersion({
    store,
    flow,
    ...(parentVersion ? { version: parentVersion } : {}),
  });
  checkCompatible(version, definition);
  return version;
}

/** Refuses a state written by other operators (semantics.md "Replay": changed dedup keys, …). */
export function checkCompatible(version: StateVersion, definition: FlowDefinition): void {
  const stored = signatureSchema.safeParse(version.meta["operators"]);
  if (!stored.success) return;
  const wanted = operatorSignature(definition);
  if (!sameSignature(stored.data, wanted)) {
    throw new IncompatibleStateError(
      definition.name,
      "operator",
      describeSignature(stored.data),
      describeSignature(wanted),
    );
  }
}

export async function runStatefulOperators(context: StatefulBatchContext): Promise<StateProgress> {
  const { sandbox, definition, plan } = context;
  // 1.
  const version = await openFlowState(context.store, context.flow, definition, context.parentVersion);
  const writer: StateWriter = version.writer();
  writer.setMeta("operators", operatorSignature(definition));
  writer.setMeta(DEFINITION_META, definitionSignature(definition));

  // 2. Arrival order: the order the source loaded the rows in (DuckDB keeps insertion order).
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${INPUT} AS SELECT *, row_number() OVER () AS ${ROW} FROM ${SOURCE_TABLE}`,
  );
  const columns = await columnTypes(sandbox, INPUT);
  const requireColumn = (column: string, setting: string) => {
    if (!columns.has(column))
      throw new StatefulColumnError(definition.name, setting, column, [...columns.keys()]);
  };
  if (plan.kind === "join")
    return finish(context, writer, await joinBatch(context, plan, version, writer, columns));

  // 3.
  let dropped = 0;
  let watermark: number | undefined;
  /** The watermark the batch started with: Spark's watermark for eviction in this batch. */
  let previous: number | undefined;
  const mark =
    plan.kind === "plain" || plan.kind === "dedup" || plan.kind === "windowed" ? plan.watermark : undefined;
  if (mark) {
    requireColumn(mark.column, "watermark.column");
    const stored = watermarkMetaSchema.safeParse(version.meta["watermark"]);
    previous = stored.success ? stored.data.micros : undefined;
    const late = lateSql(mark.column, previous);
    const [figures] = await sandbox.rows(
      `SELECT count(*) FILTER (WHERE ${late})::BIGINT AS late, max(epoch_us(${eventTimeSql(mark.column)})) FILTER (WHERE NOT ${late})::DOUBLE AS newest FROM ${INPUT}`,
    );
    dropped = Number(figures?.["late"] ?? 0);
    const newest =
      figures?.["newest"] === null || figures?.["newest"] === undefined
        ? undefined
        : Number(figures["newest"]);
    watermark = advanceWatermark(previous, newest, mark.delayMicros / 1000);
    // A view: the rows are materialized once, as `source` (step 5).
    await sandbox.run(`CREATE OR REPLACE TEMP VIEW ${KEPT} AS SELECT * FROM ${INPUT} WHERE NOT ${late}`);
    if (watermark !== undefined) writer.setMeta("watermark", { column: mark.column, micros: watermark });
  }
  const kept = mark ? KEPT : INPUT;

  // 4.
  let output = `SELECT * FROM ${kept}`;
  let duplicates = 0;
  const dedup = plan.kind === "dedup" || plan.kind === "windowed" ? plan.dedup : undefined;
  if (dedup) {
    for (const key of dedup.keys) requireColumn(key, "drop_duplicates.keys");
    const result = await deduplicate({
      sandbox,
      version,
      writer,
      input: kept,
      rowColumn: ROW,
      keys: dedup.keys.map((name) => ({ name, type: columns.get(name)! })),
      ...(dedup.withinWatermark && mark
        ? { eventTime: { column: mark.column, delayMicros: mark.delayMicros, watermark: previous } }
        : {}),
    });
    output = result.rowsSql;
    duplicates = result.duplicates;
  }

  // 5.
  await replaceSource(sandbox, `SELECT * EXCLUDE (${ROW}) FROM (${output})`);
  let windows: { sql: string; windowsEmitted: number } | undefined;
  if (plan.kind === "windowed") {
    requireColumn(plan.window.column, "window(...)");
    windows = await aggregateWindows({
      sandbox,
      version,
      writer,
      flowName: definition.name,
      input: SOURCE_TABLE,
      plan,
      watermark,
    });
  }

  // 6.
  const operators: StateOperatorName[] = [];
  if (dedup)
    operators.push(
      dedup.withinWatermark && mark
        ? STATE_OPERATOR_NAMES.dedupeWithinWatermark
        : STATE_OPERATOR_NAMES.dedupe,
    );
  if (windows) operators.push(STATE_OPERATOR_NAMES.windowAggregation);
  return finish(context, writer, {
    operators,
    dropped,
    duplicates,
    windowsEmitted: windows?.windowsEmitted ?? 0,
    ...(windows ? { query: windows.sql } : {}),
    watermark,
  });
}

interface OperatorFigures {
  readonly operators: readonly StateOperatorName[];
  readonly dropped: number;
  readonly duplicates?: number;
  readonly windowsEmitted?: number;
  readonly joined?: { readonly pairs: number; readonly leftOuterRows?: number };
  readonly query?: string;
  readonly watermark: number | undefined;
}

/** Step 6: the next state version, and the batch's `stateOperators`. */
async function finish(
  context: StatefulBatchContext,
  writer: StateWriter,
  figures: OperatorFigures,
): Promise<StateProgress> {
  const written = await writer.commit(context.sandbox, context.seq);
  const { watermark } = figures;
  return {
    version: written.version,
    operators: figures.operators,
    numRowsTotal: written.metrics.rows,
    stateBytes: written.metrics.bytes,
    numRowsDroppedByWatermark: figures.dropped,
    numDuplicatesDropped: figures.duplicates ?? 0,
    numWindowsEmitted: figures.windowsEmitted ?? 0,
    ...(figures.joined ? { numJoinedRows: figures.joined.pairs } : {}),
    ...(figures.joined?.leftOuterRows !== undefined
      ? { numLeftOuterRows: figures.joined.leftOuterRows }
      : {}),
    ...(figures.query !== undefined ? { query: figures.query } : {}),
    ...(watermark !== undefined
      ? { watermarkMicros: watermark, watermark: describeWatermark(watermark)! }
      : {}),
  };
}

/** Steps 3–5 of a stream-stream join flow: both streams' watermarks and the join (stream-join.ts). */
async function joinBatch(
  context: StatefulBatchContext,
  plan: JoinFlowPlan,
  version: StateVersion,
  writer: StateWriter,
  leftColumns: ReadonlyMap<string, string>,
): Promise<OperatorFigures> {
  const { sandbox, definition } = context;
  const { stream, leftWatermark: leftMark, rightWatermark: rightMark } = plan;
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${JOINED_INPUT} AS SELECT *, row_number() OVER () AS ${ROW} FROM ${quoteIdentifier(stream)}`,
  );
  const rightColumns = await columnTypes(sandbox, JOINED_INPUT);
  for (const [columns, mark, setting] of [
    [leftColumns, leftMark, "watermark.column"],
    [rightColumns, rightMark, "join.watermark.column"],
  ] as const) {
    if (!columns.has(mark.column))
      throw new StatefulColumnError(definition.name, setting, mark.column, [...columns.keys()]);
  }
  const side = (input: string, columns: ReadonlyMap<string, string>, watermark: typeof leftMark) => ({
    input,
    rowColumn: ROW,
    columns: [...columns].filter(([name]) => name !== ROW).map(([name, type]) => ({ name, type })),
    watermark,
  });
  const result = await joinStreams({
    sandbox,
    version,
    writer,
    seq: context.seq,
    flowName: definition.name,
    plan,
    left: side(INPUT, leftColumns, leftMark),
    right: side(JOINED_INPUT, rightColumns, rightMark),
  });
  return {
    operators: [STATE_OPERATOR_NAMES.join],
    dropped: result.dropped,
    joined: {
      pairs: result.pairs,
      ...(result.leftOuterRows !== undefined ? { leftOuterRows: result.leftOuterRows } : {}),
    },
    query: result.sql,
    watermark: result.watermark,
  };
}

async function columnTypes(sandbox: Sandbox, table: string): Promise<Map<string, string>> {
  const rows = await sandbox.rows(`DESCRIBE ${quoteIdentifier(table)}`);
  return new Map(rows.map((r) => [String(r["column_name"]), String(r["column_type"])]));
}

/**
 * Points `source` (a view or a temp table, as the source loaded it) at `sql`, as a view: its rows
 * are computed when the flow's SQL reads them, streaming into the data files, not copied first.
 */
async function replaceSource(sandbox: Sandbox, sql: string): Promise<void> {
  const [kind] = await sandbox.rows(
    `SELECT 'VIEW' AS k FROM duckdb_views() WHERE view_name = '${SOURCE_TABLE}' AND NOT internal ` +
      `UNION ALL SELECT 'TABLE' FROM duckdb_tables() WHERE table_name = '${SOURCE_TABLE}'`,
  );
  if (kind) await sandbox.run(`DROP ${String(kind["k"])} ${SOURCE_TABLE}`);
  await sandbox.run(`CREATE TEMP VIEW ${SOURCE_TABLE} AS ${sql}`);
}
