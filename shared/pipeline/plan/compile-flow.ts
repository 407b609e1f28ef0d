import { sequenceColumns } from "../auto-cdc-schema.ts";
import type { FlowDefinition } from "../definition-schema.ts";
import { parseInterval } from "../duration.ts";
import { streamAggregationOf, type WindowedAggregation } from "../stream-aggregation.ts";
import { streamJoinOf } from "../stream-join.ts";
import type { AutoCdcFlowPlan } from "./auto-cdc-flow-plan.ts";
import type { FlowPlan } from "./flow-plan.ts";
import { JOIN_ROW, JOIN_SEQ, type JoinFlowPlan } from "./join-flow-plan.ts";
import { expressionSql, type SqlCompiler } from "./sql-compiler.ts";
import { joinStateSignature, windowStateSignature } from "./state-signatures.ts";
import type { WatermarkStep } from "./stream-steps.ts";
import type { WindowedFlowPlan } from "./windowed-flow-plan.ts";

type Node = Record<string, unknown>;

/**
 * The plan of a validated flow (validation has refused every shape a plan cannot hold: an aggregation
 * without a window, a join without a time range). `statement` is its SQL's parse tree with the
 * pipeline's namespace made bare, as the sandbox reads it.
 */
export async function compileFlow(
  flow: FlowDefinition,
  statement: unknown,
  sql: SqlCompiler,
): Promise<FlowPlan> {
  if (flow.auto_cdc) return autoCdcPlan(flow);
  const watermark = flow.watermark ? watermarkStep(flow.watermark) : undefined;
  const dedup = flow.drop_duplicates
    ? { keys: [...flow.drop_duplicates.keys], withinWatermark: flow.drop_duplicates.within_watermark }
    : undefined;
  if (flow.join) return joinPlan(flow, statement, sql);
  const aggregation = watermark ? streamAggregationOf(statement) : undefined;
  if (aggregation?.kind === "windowed" && watermark)
    return windowedPlan(flow, statement, aggregation, watermark, sql, dedup);
  if (dedup)
    return { kind: "dedup", flow: flow.name, sql: flow.sql, dedup, ...(watermark ? { watermark } : {}) };
  return { kind: "plain", flow: flow.name, sql: flow.sql, ...(watermark ? { watermark } : {}) };
}

function watermarkStep(mark: { readonly column: string; readonly delay: string }): WatermarkStep {
  return { column: mark.column, delay: mark.delay, delayMicros: (parseInterval(mark.delay) ?? 0) * 1000 };
}

async function windowedPlan(
  flow: FlowDefinition,
  statement: unknown,
  aggregation: WindowedAggregation,
  watermark: WatermarkStep,
  sql: SqlCompiler,
  dedup: WindowedFlowPlan["dedup"],
): Promise<WindowedFlowPlan> {
  const template = await sql.parse("SELECT 1");
  const treeSql = (text: string) => expressionSql(sql, template, JSON.parse(text));
  return {
    kind: "windowed",
    flow: flow.name,
    sql: flow.sql,
    watermark,
    ...(dedup ? { dedup } : {}),
    window: aggregation.window,
    groupKeys: await Promise.all(aggregation.groupKeys.map(treeSql)),
    aggregates: await Promise.all(
      aggregation.aggregates.map(async (a) => ({ kind: a.kind, sql: await treeSql(a.text) })),
    ),
    partialSql: await sql.deparse(aggregation.partial),
    finalSql: await namedFinalSql(sql, template, statement, aggregation.final, aggregation.aliases),
    stateSignature: windowStateSignature({
      window: aggregation.window,
      keys: aggregation.groupKeys,
      aggregates: aggregation.aggregates,
    }),
  };
}

/**
 * The final statement, each output column named as the query names it: its alias or column, else
 * the text of its expression (what DuckDB names an unaliased expression).
 */
export async function namedFinalSql(
  sql: SqlCompiler,
  template: unknown,
  statement: unknown,
  final: unknown,
  aliases: readonly (string | undefined)[],
): Promise<string> {
  const original = (statement as { node: { select_list: Node[] } }).node;
  const finalStatement = final as { node: { select_list: Node[] } };
  const items = await Promise.all(
    finalStatement.node.select_list.map(async (item, i) => ({
      ...item,
      alias: aliases[i] ?? (await expressionSql(sql, template, original.select_list[i])),
    })),
  );
  return sql.deparse({ ...finalStatement, node: { ...finalStatement.node, select_list: items } });
}

async function joinPlan(flow: FlowDefinition, statement: unknown, sql: SqlCompiler): Promise<JoinFlowPlan> {
  const stream = flow.join!.stream;
  const leftWatermark = watermarkStep(flow.watermark!);
  const rightWatermark = watermarkStep(flow.join!.watermark!);
  const join = streamJoinOf(statement, {
    stream,
    leftTime: leftWatermark.column,
    rightTime: rightWatermark.column,
  });
  // Validation refused every other join (STREAM_JOIN, JOIN_TIME_BOUND_REQUIRED).
  if (join.kind !== "join") throw new RangeError(`flow ${flow.name} was validated with a refused join`);
  const condition = ((statement as { node: Node }).node["from_table"] as Node)["condition"];
  const template = await sql.parse("SELECT 1");
  return {
    kind: "join",
    flow: flow.name,
    sql: await sql.deparse(statement),
    innerSql: await sql.deparse(withJoinType(statement, "INNER")),
    matchSql: await sql.deparse(matchStatement(statement, join.leftAlias)),
    type: join.type,
    stream,
    leftAlias: join.leftAlias,
    rightAlias: join.rightAlias,
    range: join.range,
    condition: await expressionSql(sql, template, condition),
    leftWatermark,
    rightWatermark,
    stateSignature: joinStateSignature({ type: join.type, range: join.range, condition }),
  };
}

/** The statement with its outermost join's type set. */
function withJoinType(statement: unknown, type: "INNER" | "LEFT"): unknown {
  const copy = structuredClone(statement) as { node: Node };
  (copy.node["from_table"] as Node)["join_type"] = type;
  return copy;
}

/** `SELECT <left>.seq, <left>.row FROM <the join, INNER, ON its condition>`: the left rows that match. */
function matchStatement(statement: unknown, leftAlias: string): unknown {
  const copy = withJoinType(statement, "INNER") as { node: Node };
  const column = (name: string) => ({
    class: "COLUMN_REF",
    type: "COLUMN_REF",
    alias: "",
    query_location: 0,
    column_names: [leftAlias, name],
  });
  copy.node["select_list"] = [column(JOIN_SEQ), column(JOIN_ROW)];
  copy.node["where_clause"] = null;
  copy.node["modifiers"] = [];
  copy.node["qualify"] = null;
  copy.node["having"] = null;
  return copy;
}

/** An AUTO CDC flow's plan: its settings as the engine reads them (no SQL analysis needed). */
export function autoCdcPlan(flow: FlowDefinition): AutoCdcFlowPlan {
  const cdc = flow.auto_cdc!;
  return {
    kind: "auto_cdc",
    flow: flow.name,
    sql: flow.sql,
    keys: [...cdc.keys],
    sequenceBy: [...sequenceColumns(cdc)],
    ...(cdc.apply_as_deletes !== undefined ? { applyAsDeletes: cdc.apply_as_deletes } : {}),
    ...(cdc.apply_as_truncates !== undefined ? { applyAsTruncates: cdc.apply_as_truncates } : {}),
    ...(cdc.column_list ? { columnList: [...cdc.column_list] } : {}),
    ...(cdc.except_column_list ? { exceptColumnList: [...cdc.except_column_list] } : {}),
    scdType: cdc.stored_as_scd_type,
    ...(cdc.track_history_column_list ? { trackHistoryColumnList: [...cdc.track_history_column_list] } : {}),
    ...(cdc.track_history_except_column_list
      ? { trackHistoryExceptColumnList: [...cdc.track_history_except_column_list] }
      : {}),
    ignoreNullUpdates: cdc.ignore_null_updates,
  };
}
