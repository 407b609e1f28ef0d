import type { MaterializedViewDefinition } from "../definition-schema.ts";
import { viewAggregationOf } from "../view-aggregation.ts";
import { namedFinalSql } from "./compile-flow.ts";
import { expressionSql, type SqlCompiler } from "./sql-compiler.ts";
import type { ViewPlan } from "./view-plan.ts";

/** What a materialized view reads, from the pipeline's graph: its input tables, and whether a view. */
export interface ViewReads {
  readonly tables: readonly string[];
  readonly readsView: boolean;
}

/**
 * The plan of a validated materialized view: incremental when its query is a decomposable GROUP BY
 * over one input table (view-aggregation.ts), else recomputed, with the reason. `statement` is its
 * SQL's parse tree with the pipeline's namespace made bare.
 */
export async function compileView(
  view: MaterializedViewDefinition,
  statement: unknown,
  reads: ViewReads,
  sql: SqlCompiler,
): Promise<ViewPlan> {
  if (reads.readsView)
    return { kind: "recompute", view: view.name, sql: view.sql, reason: "the view reads a view" };
  const aggregation = viewAggregationOf(statement, new Set(reads.tables.map((name) => name.toLowerCase())));
  if (aggregation.kind === "recompute")
    return { kind: "recompute", view: view.name, sql: view.sql, reason: aggregation.reason };
  const template = await sql.parse("SELECT 1");
  const treeSql = (text: string) => expressionSql(sql, template, JSON.parse(text));
  return {
    kind: "incremental",
    view: view.name,
    sql: await sql.deparse(statement),
    input: aggregation.input,
    groupKeys: await Promise.all(aggregation.groupKeys.map(treeSql)),
    aggregates: await Promise.all(
      aggregation.aggregates.map(async (a) => ({ kind: a.kind, sql: await treeSql(a.text) })),
    ),
    partialSql: await sql.deparse(aggregation.partial),
    finalSql: await namedFinalSql(sql, template, statement, aggregation.final, aggregation.aliases),
    stateSignature: aggregation.signature,
  };
}
