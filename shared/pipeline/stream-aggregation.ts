import { parseInterval } from "./duration.ts";
import {
  aggregateColumn,
  groupColumn,
  partialColumn,
  WINDOW_FINAL,
  WINDOW_ROWS,
  WINDOW_START,
  WINDOW_STRUCT,
  type AggregateKind,
} from "./plan/aggregate-columns.ts";
import type { WindowSpec } from "./plan/windowed-flow-plan.ts";
import { MICRO_BATCH_NAME } from "./dataset-references.ts";

/**
 * Aggregation over a flow's stream, read from DuckDB's serialized parse tree (pure). A flow's SQL runs
 * over one micro-batch, so an aggregate over `source` would aggregate each batch alone. Ebb keeps one
 * shape incrementally, as Spark does in append mode: the outermost SELECT groups by an event-time
 * `window(column, size[, slide])` (plus other keys) and every aggregate is decomposable (count, sum,
 * min, max, avg), so a batch adds partial aggregates to the state and a window is written once, when
 * the watermark passes its end. count, sum and avg of DISTINCT values keep the set of distinct values
 * as their partial. Any other aggregation of the stream (no window, a non-decomposable aggregate, an
 * aggregate in a subquery or CTE, SELECT DISTINCT) is refused with what to write instead.
 *
 * The plan is two rewritten statements: `partial` (the batch's partial aggregates per window and key,
 * read from `WINDOW_ROWS`: each row once per window it falls in) and `final` (the user's select list
 * over the finished windows in `WINDOW_FINAL`). Compiling the flow's plan (plan/compile-flow.ts) turns
 * both back into SQL text, once per definition version.
 */

/** The name of the micro-batch in a flow's SQL. */

export interface WindowedAggregation extends Decomposition {
  readonly kind: "windowed";
  readonly window: WindowSpec;
}

export type StreamAggregation = WindowedAggregation | { readonly kind: "refused"; readonly message: string };

/** Aggregates whose partial state Ebb keeps, and how a partial is merged (avg: a sum and a count). */
const DECOMPOSABLE: Readonly<Record<string, AggregateKind>> = {
  count: "count",
  count_star: "count",
  sum: "sum",
  min: "min",
  max: "max",
  avg: "avg",
  mean: "avg",
};

/** Aggregates that need every row (or a set of them), so no small partial state exists. */
const NOT_DECOMPOSABLE = new Set([
  "median",
  "quantile",
  "quantile_cont",
  "quantile_disc",
  "percentile_cont",
  "percentile_disc",
  "mode",
  "string_agg",
  "group_concat",
  "listagg",
  "list",
  "array_agg",
  "collect_list",
  "collect_set",
  "approx_count_distinct",
  "approx_quantile",
  "stddev",
  "stddev_samp",
  "stddev_pop",
  "variance",
  "var_samp",
  "var_pop",
  "first",
  "last",
  "any_value",
  "arg_min",
  "arg_max",
  "min_by",
  "max_by",
  "bool_and",
  "bool_or",
  "bit_and",
  "bit_or",
  "product",
  "histogram",
  "entropy",
  "kurtosis",
  "skewness",
  "corr",
  "covar_pop",
  "covar_samp",
  "count_if",
  "countif",
  "fsum",
  "favg",
  "kahan_sum",
  "sumkahan",
]);

export type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** With DISTINCT: count, sum and avg keep the set of distinct values; min and max are unchanged by it. */
function distinctKind(kind: AggregateKind): AggregateKind {
  if (kind === "count" || kind === "sum" || kind === "avg") return `${kind}_distinct`;
  return kind;
}

/** A call of one argument that is not `*` (what a DISTINCT aggregate's set can hold). */
function oneArgument(call: Node): boolean {
  const args = (call["children"] as Node[] | undefined) ?? [];
  return args.length === 1 && args[0]!["class"] !== "STAR";
}

function isAggregateCall(node: Node): boolean {
  if (node["class"] !== "FUNCTION" || typeof node["function_name"] !== "string") return false;
  const name = node["function_name"].toLowerCase();
  return name in DECOMPOSABLE || NOT_DECOMPOSABLE.has(name);
}

const refuse = (message: string): StreamAggregation => ({ kind: "refused", message });

const AGGREGATE_ADVICE =
  "write the rows to the streaming table and aggregate them in a materialized view over it, or aggregate per event-time window: GROUP BY window(<event time column>, '10 minutes') with a watermark on that column";

/** The stream aggregation of a flow's statement, or undefined when it does not aggregate `source`. */
export function streamAggregationOf(statement: unknown): StreamAggregation | undefined {
  const root = isNode(statement) && isNode(statement["node"]) ? statement["node"] : undefined;
  if (!root) return undefined;
  const selects = streamSelects(root);
  const aggregating = selects.filter(aggregates);
  if (aggregating.length === 0)
    return selects.some(selectsDistinct)
      ? refuse(
          "SELECT DISTINCT over its stream would remove duplicates only within each micro-batch; to drop a row whose key was seen in any batch, set drop_duplicates: {keys: [<columns>]} on the flow (add within_watermark: true and a watermark to bound the state), or select the distinct rows in a materialized view",
        )
      : undefined;
  if (aggregating.length > 1 || aggregating[0] !== root)
    return refuse(
      `aggregates over its stream inside a subquery or CTE, which would aggregate each micro-batch alone; ${AGGREGATE_ADVICE}`,
    );
  return windowedAggregation(root);
}

/** The SELECT nodes that read the stream. */
function streamSelects(root: Node): Node[] {
  const found: Node[] = [];
  const streamNames = new Set([MICRO_BATCH_NAME]);
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isNode(node)) return;
    // A CTE over the stream is a stream too.
    const ctes = (node["cte_map"] as { map?: unknown[] } | undefined)?.map ?? [];
    for (const entry of ctes) {
      const key = isNode(entry) ? entry["key"] : undefined;
      if (typeof key === "string" && readsStream(isNode(entry) ? entry["value"] : undefined, streamNames))
        streamNames.add(key.toLowerCase());
    }
    if (node["type"] === "SELECT_NODE" && readsStream(node["from_table"], streamNames)) found.push(node);
    for (const value of Object.values(node)) visit(value);
  };
  visit(root);
  return found;
}

/** A SELECT that aggregates: GROUP BY, or an aggregate call. */
function aggregates(select: Node): boolean {
  const groups = (select["group_expressions"] as unknown[] | undefined)?.length ?? 0;
  const forced = select["aggregate_handling"] === "FORCE_AGGREGATES";
  return groups > 0 || forced || containsAggregate(select["select_list"]) || Boolean(select["having"]);
}

const selectsDistinct = (select: Node): boolean =>
  ((select["modifiers"] as Node[] | undefined) ?? []).some((m) => m["type"] === "DISTINCT_MODIFIER");

function readsStream(node: unknown, names: ReadonlySet<string>): boolean {
  if (Array.isArray(node)) return node.some((child) => readsStream(child, names));
  if (!isNode(node)) return false;
  if (
    node["type"] === "BASE_TABLE" &&
    typeof node["table_name"] === "string" &&
    !node["schema_name"] &&
    !node["catalog_name"] &&
    names.has(node["table_name"].toLowerCase())
  )
    return true;
  return Object.values(node).some((child) => readsStream(child, names));
}

function containsAggregate(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(containsAggregate);
  if (!isNode(node)) return false;
  if (node["type"] === "SUBQUERY" || node["class"] === "SUBQUERY") return false;
  if (isAggregateCall(node)) return true;
  return Object.values(node).some(containsAggregate);
}

/** A node without the parts that do not change its meaning, for comparing expressions. */
function shape(node: unknown): string {
  return JSON.stringify(node, (key, value: unknown) =>
    key === "alias" || key === "query_location" ? undefined : value,
  );
}

const columnRef = (name: string, alias: string): Node => ({
  class: "COLUMN_REF",
  type: "COLUMN_REF",
  alias,
  query_location: 0,
  column_names: [name],
});

function windowSpec(call: Node): WindowSpec | string {
  const args = (call["children"] as unknown[] | undefined) ?? [];
  const [time, ...lengths] = args;
  const column =
    isNode(time) && time["class"] === "COLUMN_REF"
      ? (time["column_names"] as string[] | undefined)
      : undefined;
  const texts = lengths.map((arg) =>
    isNode(arg) && arg["class"] === "CONSTANT" && isNode(arg["value"]) ? arg["value"]["value"] : undefined,
  );
  if (!column || column.length !== 1 || lengths.length < 1 || lengths.length > 2)
    return "window(...) takes an event time column and a size, and optionally a slide: window(event_time, '10 minutes') or window(event_time, '10 minutes', '5 minutes')";
  const [size, slide] = texts.map((text) => (typeof text === "string" ? parseInterval(text) : undefined));
  if (!size || size <= 0 || (texts.length === 2 && (!slide || slide <= 0)))
    return `window(${column[0]}, …) needs durations as string literals, e.g. '10 minutes' or '1 hour'`;
  if (slide !== undefined && slide > size)
    return `the slide of window(${column[0]}, …) is longer than its size: windows would leave gaps; make the slide at most the size`;
  return { column: column[0]!, sizeMicros: size * 1000, slideMicros: (slide ?? size) * 1000 };
}

function windowedAggregation(select: Node): StreamAggregation {
  const groups = (select["group_expressions"] as Node[] | undefined) ?? [];
  const windows = groups.filter(
    (g) => g["class"] === "FUNCTION" && String(g["function_name"]).toLowerCase() === "window",
  );
  if (windows.length !== 1)
    return refuse(`aggregates over its stream without an event-time window; ${AGGREGATE_ADVICE}`);
  const spec = windowSpec(windows[0]!);
  if (typeof spec === "string") return refuse(spec);
  const sets = select["group_sets"] as unknown[][] | undefined;
  if ((sets?.length ?? 0) > 1)
    return refuse(
      "GROUPING SETS, ROLLUP and CUBE over a stream are not kept incrementally; group by the window and plain keys",
    );
  if (select["having"])
    return refuse(
      "HAVING over a windowed stream aggregation is not supported: filter the streaming table's rows downstream",
    );
  if (select["qualify"] || ((select["modifiers"] as unknown[] | undefined)?.length ?? 0) > 0)
    return refuse(
      "a windowed stream aggregation writes each window once, in no order: remove QUALIFY, ORDER BY, LIMIT and DISTINCT",
    );
  if (((select["cte_map"] as { map?: unknown[] } | undefined)?.map?.length ?? 0) > 0)
    return refuse(
      "a windowed stream aggregation reads `source` directly: move the CTE's logic into the query",
    );
  const from = select["from_table"] as Node;
  if (from["type"] !== "BASE_TABLE")
    return refuse(
      "a windowed stream aggregation reads `source` alone: join static data in a downstream dataset",
    );

  const decomposed = decomposeAggregation(select, {
    keys: groups.filter((g) => g !== windows[0]),
    window: windows[0]!,
    partialFrom: { ...from, table_name: WINDOW_ROWS, alias: from["alias"] || MICRO_BATCH_NAME },
    leading: [columnRef(WINDOW_START, WINDOW_START)],
    finalTable: WINDOW_FINAL,
  });
  if ("refused" in decomposed) return refuse(decomposed.refused);
  return { kind: "windowed", window: spec, ...decomposed };
}

/** A GROUP BY split into partial aggregates and the select list over merged partials. */
export interface Decomposition {
  /** The grouping keys (besides a window), as SQL text of their parse tree (for the state's identity). */
  readonly groupKeys: readonly string[];
  readonly aggregates: readonly { readonly kind: AggregateKind; readonly text: string }[];
  /** Serialized statements (json_serialize_sql's shape): partials per key, and the final select list. */
  readonly partial: unknown;
  readonly final: unknown;
  /** Output name of each item of the final select list, when the user gave one. */
  readonly aliases: readonly (string | undefined)[];
}

export interface DecomposeOptions {
  /** The grouping expressions (without the window). */
  readonly keys: readonly Node[];
  /** The `window(...)` call, for a windowed aggregation: it becomes `WINDOW_STRUCT` in the final list. */
  readonly window?: Node;
  /** What the partial statement reads, and the partial columns that lead its select list and keys. */
  readonly partialFrom: Node;
  readonly leading: readonly Node[];
  /** The table the final statement reads: key columns `groupColumn(j)`, aggregates `aggregateColumn(i)`. */
  readonly finalTable: string;
}

/**
 * Splits a SELECT ... GROUP BY of decomposable aggregates (pure): `partial` computes, per key, the
 * partials each aggregate keeps (avg: a sum and a count); `final` is the user's select list over the
 * merged partials. Refused (with why) when an item is neither a key nor a decomposable aggregate.
 */
export function decomposeAggregation(
  select: Node,
  options: DecomposeOptions,
): Decomposition | { readonly refused: string } {
  const from = select["from_table"] as Node;
  const windowShape = options.window ? shape(options.window) : undefined;
  const keys = options.keys;
  for (const key of keys) {
    if (key["class"] === "CONSTANT")
      return { refused: "group by the expressions themselves, not by position (GROUP BY 1)" };
    if (containsAggregate(key)) return { refused: "an aggregate cannot be a grouping key" };
  }
  const keyShapes = keys.map(shape);
  const aggregates: { kind: AggregateKind; node: Node }[] = [];
  const problems: string[] = [];

  // The final select list: aggregates, keys and the window become columns of the final table.
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!isNode(node)) return node;
    const alias = typeof node["alias"] === "string" ? node["alias"] : "";
    const key = keyShapes.indexOf(shape(node));
    if (key >= 0) return columnRef(groupColumn(key), alias);
    if (windowShape !== undefined && shape(node) === windowShape) return columnRef(WINDOW_STRUCT, alias);
    if (isAggregateCall(node)) {
      const name = String(node["function_name"]).toLowerCase();
      const kind =
        DECOMPOSABLE[name] && node["distinct"] ? distinctKind(DECOMPOSABLE[name]) : DECOMPOSABLE[name];
      if (!kind)
        problems.push(
          `${name}() needs every row of a window, so it cannot be kept incrementally: use count, sum, min, max or avg (also of DISTINCT values), or aggregate in a materialized view`,
        );
      else if (node["distinct"] && !oneArgument(node))
        problems.push(
          `${name}(DISTINCT …) of several columns or * is not supported: aggregate the distinct values of one expression, e.g. count(DISTINCT struct_pack(a, b))`,
        );
      else if (containsAggregate(node["children"]))
        problems.push("an aggregate inside an aggregate is not allowed");
      aggregates.push({ kind: kind ?? "count", node });
      return columnRef(aggregateColumn(aggregates.length - 1), alias);
    }
    if (node["class"] === "COLUMN_REF") {
      const names = node["column_names"] as string[];
      if (windowShape !== undefined && names[0]?.toLowerCase() === "window" && names.length <= 2)
        return { ...node, column_names: [WINDOW_STRUCT, ...names.slice(1)] };
      problems.push(
        `column ${names.join(".")} is neither grouped nor aggregated: add it to GROUP BY or wrap it in an aggregate`,
      );
      return node;
    }
    if (node["class"] === "STAR") {
      problems.push("SELECT * cannot be aggregated: name the grouped columns and the aggregates");
      return node;
    }
    if (node["type"] === "SUBQUERY" || node["class"] === "SUBQUERY") {
      problems.push("a subquery in the select list of a windowed aggregation is not supported");
      return node;
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, rewrite(v)]));
  };
  // The window is a struct {start, end}, as on Databricks; unaliased, its column is `window`.
  const finalList: Node[] = [];
  const aliases: (string | undefined)[] = [];
  (select["select_list"] as Node[]).forEach((item) => {
    const alias = typeof item["alias"] === "string" && item["alias"] !== "" ? item["alias"] : undefined;
    const names = item["class"] === "COLUMN_REF" ? (item["column_names"] as string[]) : undefined;
    finalList.push(rewrite(item) as Node);
    aliases.push(alias ?? names?.at(-1));
  });
  if (problems.length > 0) return { refused: problems[0]! };

  const partials: Node[] = [...options.leading];
  keys.forEach((key, j) => partials.push({ ...key, alias: groupColumn(j) }));
  aggregates.forEach(({ kind, node }, i) => {
    const call = (name: string, part: string): Node => ({
      ...node,
      function_name: name,
      alias: partialColumn(i, part),
    });
    const argument = String(node["function_name"]).toLowerCase() === "count_star" ? "count_star" : "count";
    if (kind === "avg") partials.push(call("sum", "sum"), call("count", "count"));
    else if (kind.endsWith("_distinct"))
      partials.push(call("list", "set")); // list(DISTINCT …): the node keeps DISTINCT
    else partials.push(call(kind === "count" ? argument : kind, kind));
  });
  const leadingKeys = options.leading.map((node) => columnRef(String(node["alias"]), ""));
  const partialNode: Node = {
    ...select,
    select_list: partials,
    from_table: options.partialFrom,
    group_expressions: [...leadingKeys, ...keys],
    group_sets: [[...Array(leadingKeys.length + keys.length).keys()]],
    // Partials are state, not output: an ORDER BY orders only the final rows.
    modifiers: [],
  };
  const finalNode: Node = {
    ...select,
    select_list: finalList,
    from_table: { ...from, table_name: options.finalTable, alias: "" },
    where_clause: null,
    group_expressions: [],
    group_sets: [],
  };
  return {
    groupKeys: keyShapes,
    aggregates: aggregates.map(({ kind, node }) => ({ kind, text: shape(node) })),
    partial: { node: partialNode, named_param_map: [] },
    final: { node: finalNode, named_param_map: [] },
    aliases,
  };
}
