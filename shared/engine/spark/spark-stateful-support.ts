import type { FlowPlan } from "../../pipeline/plan/index.ts";

/**
 * Which stateful plans the Spark job runs (functions/spark/ebb_spark_state.py): the watermark,
 * deduplication and windowed aggregations (count, sum, min, max, avg, also of DISTINCT values, any
 * window size and slide); stream-stream joins stay on DuckDB for now. Pure: the engine choice asks it
 * before a batch, the Spark batch again before its job.
 */
export function sparkStatefulUnsupported(plan: FlowPlan): string | undefined {
  if (plan.kind === "join") return "stream-stream joins run on DuckDB only, for now";
  return undefined;
}
