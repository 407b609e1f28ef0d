import type { FlowPlan } from "../../pipeline/plan/index.ts";

/**
 * Which stateful plans the Spark job runs (functions/spark/ebb_spark_state.py): the watermark,
 * deduplication, windowed aggregations of count, sum, min, max and avg, and stream-stream joins
 * (functions/spark/ebb_spark_join.py); DISTINCT aggregates of a window stay on DuckDB for now. Pure: the engine choice asks it before a
 * batch, the Spark batch again before its job.
 */
export function sparkStatefulUnsupported(plan: FlowPlan): string | undefined {
  if (plan.kind === "windowed") {
    const distinct = plan.aggregates.find((a) => a.kind.endsWith("_distinct"));
    if (distinct) return `a DISTINCT aggregate of a window (${distinct.sql}) runs on DuckDB only, for now`;
    // Window starts are keys hashed as JSON text: both engines spell whole seconds alike.
    if (plan.window.slideMicros % 1_000_000 !== 0 || plan.window.sizeMicros % 1_000_000 !== 0)
      return "a window whose size or slide is not a whole number of seconds runs on DuckDB only, for now";
    return undefined;
  }
  return undefined;
}
