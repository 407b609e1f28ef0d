/**
 * The names a plan's rewritten aggregation SQL and its executor agree on (pure constants): what the
 * partial statement reads and writes, and what the final statement reads. An executor builds the
 * tables these names denote between the two statements (window-aggregation.ts, incremental-view.ts).
 */

/** A windowed flow's batch rows, one per (row, window it falls in), with the window start in `WINDOW_START`. */
export const WINDOW_ROWS = "__ebb_window_rows";
export const WINDOW_START = "__ebb_window_start";
/** Finished windows: `WINDOW_STRUCT`, the key columns `groupColumn(j)`, the aggregates `aggregateColumn(i)`. */
export const WINDOW_FINAL = "__ebb_window_final";
export const WINDOW_STRUCT = "__ebb_window";
/** An incremental view's merged partials, which its final statement reads. */
export const VIEW_FINAL = "__ebb_view_final";

export const groupColumn = (j: number) => `__ebb_g${j}`;
export const aggregateColumn = (i: number) => `__ebb_a${i}`;
export const partialColumn = (i: number, part: string) => `__ebb_p${i}_${part}`;

/** The aggregates whose partials Ebb keeps; `*_distinct`: of DISTINCT values, the set of them the partial. */
export const AGGREGATE_KINDS = [
  "count",
  "sum",
  "min",
  "max",
  "avg",
  "count_distinct",
  "sum_distinct",
  "avg_distinct",
] as const;
export type AggregateKind = (typeof AGGREGATE_KINDS)[number];
