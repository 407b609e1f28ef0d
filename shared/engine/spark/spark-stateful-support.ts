import type { FlowPlan } from "../../pipeline/plan/index.ts";

/**
 * Which stateful plans the Spark job runs (functions/spark/ebb_spark_state.py): the watermark and
 * deduplication; windowed aggregations and stream-stream joins stay on DuckDB for now. Pure: the
 * engine choice asks it before a batch, the Spark batch again before its job.
 */
export function sparkStatefulUnsupported(plan: FlowPlan): string | undefined {
  if (plan.kind === "windowed") return "windowed aggregations run on DuckDB only, for now";
  if (plan.kind === "join") return "stream-stream joins run on DuckDB only, for now";
  return undefined;
}
