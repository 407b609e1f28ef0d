import { partialColumn, type AggregateKind } from "../../pipeline/plan/index.ts";

/**
 * The partials a decomposable aggregate keeps, how two partials of a key merge, and the aggregate's
 * value from its merged partials: shared by windowed aggregation and incremental materialized views.
 */

export interface Part {
  readonly name: string;
  /** The aggregate that merges a column of this part's partials (of type `type`) into one. */
  readonly merge: (column: string, type: string) => string;
}

const aggregate = (name: string) => (column: string) => `${name}(${column})`;
const FLOAT_LIST = /^(DOUBLE|FLOAT|REAL|FLOAT4|FLOAT8)\[\]$/i;
/**
 * Sets of distinct values merge into their union (list_distinct also drops NULL, as DISTINCT
 * aggregates do), sorted: a set is kept as one list whichever engine merged it (the Spark job sorts
 * with `array_sort`), so the state rows of either engine are equal. A set of floating-point values
 * holds one zero, spelled 0.0, and one NaN, as DISTINCT counts them (-0.0 equals 0.0, NaN equals
 * NaN): which zero a batch keeps is either engine's choice, Spark's `array_distinct` keeps both
 * zeros and `list_distinct` every NaN (ebb_spark_state.py `merge_parts` spells the set alike).
 */
const union = (column: string, type: string) => {
  const values = `flatten(list(${column}))`;
  if (!FLOAT_LIST.test(type.trim())) return `list_sort(list_distinct(${values}))`;
  const zeroed = `list_transform(${values}, v -> CASE WHEN v = 0 THEN CAST(0 AS DOUBLE) ELSE v END)`;
  const nan = `CASE WHEN list_bool_or(list_transform(${zeroed}, v -> isnan(v))) THEN [CAST('NaN' AS DOUBLE)] ELSE [] END`;
  return `list_sort(list_concat(list_distinct(list_filter(${zeroed}, v -> NOT isnan(v))), ${nan}))`;
};

/** The partial columns of aggregate `i` and how two partials merge (avg: a sum and a count). */
export function partsOf(kind: AggregateKind, i: number): Part[] {
  switch (kind) {
    case "avg":
      return [
        { name: partialColumn(i, "sum"), merge: aggregate("sum") },
        { name: partialColumn(i, "count"), merge: aggregate("sum") },
      ];
    case "count_distinct":
    case "sum_distinct":
    case "avg_distinct":
      return [{ name: partialColumn(i, "set"), merge: union }];
    default:
      return [{ name: partialColumn(i, kind), merge: aggregate(kind === "count" ? "sum" : kind) }];
  }
}

const INTEGER_LIST = /^U?(TINYINT|SMALLINT|INTEGER|BIGINT)\[\]$/;

/**
 * Aggregate `i`'s value from its merged partials. `typeOf` gives a partial column's type: an integer
 * sum is BIGINT (Spark's sum of integers), with or without DISTINCT.
 */
export function finalOf(kind: AggregateKind, i: number, typeOf: (name: string) => string): string {
  const set = partialColumn(i, "set");
  switch (kind) {
    case "avg":
      return `CAST(${partialColumn(i, "sum")} AS DOUBLE) / NULLIF(${partialColumn(i, "count")}, 0)`;
    case "count_distinct":
      return `coalesce(len(list_distinct(${set})), 0)`;
    case "sum_distinct":
      return INTEGER_LIST.test(typeOf(set))
        ? `CAST(list_sum(list_distinct(${set})) AS BIGINT)`
        : `list_sum(list_distinct(${set}))`;
    case "avg_distinct":
      return `list_avg(list_distinct(${set}))`;
    default:
      return partialColumn(i, kind);
  }
}
