import { VIEW_FINAL } from "./plan/aggregate-columns.ts";
import { decomposeAggregation, type Decomposition, type Node } from "./stream-aggregation.ts";

/**
 * Whether a materialized view's query can be kept incrementally, read from DuckDB's serialized parse
 * tree (pure). One shape qualifies: the outermost SELECT reads one input table (no join, no subquery
 * or CTE reading anything), optionally filters it (WHERE), and groups it by plain keys with only
 * decomposable aggregates (count, sum, min, max, avg), and orders its output, if at all, by output
 * columns (an ORDER BY of the final rows, which the kept partials do not depend on). Its partial
 * aggregates per key then merge with the partials of the rows the input gained. Anything else is
 * recomputed, with the reason.
 */

export interface IncrementalViewAggregation extends Decomposition {
  readonly kind: "incremental";
  /** The input table the view groups (as named in the query, lower case). */
  readonly input: string;
  /** What decides the meaning of the kept partials (keys, aggregates, filter, input). */
  readonly signature: string;
}

export type ViewAggregation =
  IncrementalViewAggregation | { readonly kind: "recompute"; readonly reason: string };

const isNode = (value: unknown): value is Node =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const recompute = (reason: string): ViewAggregation => ({ kind: "recompute", reason });

/** Every BASE_TABLE a tree names, lower case. */
function tablesNamed(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((child) => tablesNamed(child, into));
  else if (isNode(node)) {
    if (node["type"] === "BASE_TABLE" && typeof node["table_name"] === "string")
      into.add(node["table_name"].toLowerCase());
    for (const child of Object.values(node)) tablesNamed(child, into);
  }
  return into;
}

function hasSubquery(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasSubquery);
  if (!isNode(node)) return false;
  if (node["class"] === "SUBQUERY" || node["type"] === "SUBQUERY") return true;
  return Object.values(node).some(hasSubquery);
}

/**
 * Why the query's modifiers need a full recompute, if they do: LIMIT and DISTINCT depend on every
 * row; an ORDER BY only orders the output, so it is kept when it names output columns (by name or
 * position), which the final statement has too.
 */
function modifiersProblem(select: Node): string | undefined {
  const outputs = ((select["select_list"] as Node[] | undefined) ?? []).map(outputName);
  for (const modifier of (select["modifiers"] as Node[] | undefined) ?? []) {
    if (modifier["type"] === "DISTINCT_MODIFIER") return "the query has DISTINCT";
    if (modifier["type"] !== "ORDER_MODIFIER") return "the query has LIMIT or OFFSET";
    for (const order of (modifier["orders"] as Node[] | undefined) ?? []) {
      if (!ordersByOutput(order["expression"], outputs))
        return "the query orders by an expression, not by output columns (ORDER BY a column of the select list, by name or position, keeps it incremental)";
    }
  }
  return undefined;
}

/** The name a select item's column has: its alias, or the column it names; undefined for an unnamed expression. */
function outputName(item: Node): string | undefined {
  if (typeof item["alias"] === "string" && item["alias"] !== "") return item["alias"].toLowerCase();
  const names = item["class"] === "COLUMN_REF" ? (item["column_names"] as string[] | undefined) : undefined;
  return names?.at(-1)?.toLowerCase();
}

function ordersByOutput(expression: unknown, outputs: readonly (string | undefined)[]): boolean {
  if (!isNode(expression)) return false;
  if (expression["class"] === "COLUMN_REF") {
    const names = expression["column_names"] as string[] | undefined;
    return names?.length === 1 && outputs.includes(names[0]!.toLowerCase());
  }
  const value = expression["class"] === "CONSTANT" ? (expression["value"] as Node | undefined) : undefined;
  const position = value?.["value"];
  return (
    typeof position === "number" && Number.isInteger(position) && position >= 1 && position <= outputs.length
  );
}

/** `tables`: the names of the input tables the view reads (not SQL views). */
export function viewAggregationOf(statement: unknown, tables: ReadonlySet<string>): ViewAggregation {
  const select = isNode(statement) && isNode(statement["node"]) ? statement["node"] : undefined;
  if (!select || select["type"] !== "SELECT_NODE")
    return recompute("the query is not a single SELECT (a UNION or set operation)");
  const groups = (select["group_expressions"] as Node[] | undefined) ?? [];
  if (groups.length === 0) return recompute("the query is not a GROUP BY");
  if (((select["group_sets"] as unknown[] | undefined)?.length ?? 0) > 1)
    return recompute("the query groups by GROUPING SETS, ROLLUP or CUBE");
  if (select["having"]) return recompute("the query has a HAVING clause");
  if (select["qualify"]) return recompute("the query has a QUALIFY clause");
  const modifiers = modifiersProblem(select);
  if (modifiers !== undefined) return recompute(modifiers);
  if (((select["cte_map"] as { map?: unknown[] } | undefined)?.map?.length ?? 0) > 0)
    return recompute("the query has a CTE");
  const from = select["from_table"];
  if (!isNode(from) || from["type"] !== "BASE_TABLE" || typeof from["table_name"] !== "string")
    return recompute("the query does not read one table (a join, a subquery or a table function)");
  const input = from["table_name"].toLowerCase();
  if (!tables.has(input) || from["schema_name"] || from["catalog_name"])
    return recompute(`the query reads ${input}, which is not an input table of the pipeline`);
  if (hasSubquery(select) || tablesNamed(select).size > 1)
    return recompute("the query reads more than its one input table (a subquery)");
  const decomposed = decomposeAggregation(select, {
    keys: groups,
    partialFrom: from,
    leading: [],
    finalTable: VIEW_FINAL,
  });
  if ("refused" in decomposed)
    return recompute(`the query is not a decomposable GROUP BY: ${decomposed.refused}`);
  return {
    kind: "incremental",
    input,
    ...decomposed,
    signature: JSON.stringify({
      input,
      keys: decomposed.groupKeys,
      aggregates: decomposed.aggregates,
      where: JSON.stringify(select["where_clause"] ?? null, (k, v: unknown) =>
        k === "query_location" ? undefined : v,
      ),
    }),
  };
}
