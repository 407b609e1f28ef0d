/** A materialized view recomputed from all its inputs on each refresh, and why it is not incremental. */
export interface RecomputedViewPlan {
  readonly kind: "recompute";
  readonly view: string;
  readonly sql: string;
  readonly reason: string;
}
