import { EngineError } from "../errors.ts";

/**
 * Refusals of the Spark engine (README "Spark engine"): each names the flow and the way out.
 */

/** What a refusal names: the user's object by its kind (a flow's batch, or a materialized view's recompute). */
export type SparkWork = "flow" | "materialized view";

/** A batch was given to Spark where none is configured (no EMR application on AWS, no local Spark). */
export class SparkEngineNotConfiguredError extends EngineError {
  override readonly name = "SparkEngineNotConfiguredError";
  override readonly errorCode = "SPARK_ENGINE_NOT_CONFIGURED";
  constructor(
    readonly flow: string,
    readonly kind: SparkWork = "flow",
  ) {
    super(
      `${kind} "${flow}" was to run on Spark, but this deployment has no Spark engine (locally: run functions/spark/setup.sh and set EBB_SPARK_PYTHON and EBB_SPARK_JARS; on AWS: enable the construct's sparkEngine prop, \`sparkEngine: { enabled: true }\` in EbbProps, and deploy); or run it on DuckDB (pipelines.engine = "duckdb", or start the update with engine "duckdb")`,
      { data: { flow, kind } },
    );
  }
}

/**
 * A flow Ebb cannot run on Spark: written for DuckDB, a column type Spark reads or spells otherwise,
 * or a kind of flow the Spark engine lacks yet. `wayOut`: what the user can change, besides the
 * engine, when it is not rewriting the SQL in Spark SQL (engine-choice.ts `SparkRefusal`).
 */
export class FlowNotSupportedOnSparkError extends EngineError {
  override readonly name = "FlowNotSupportedOnSparkError";
  override readonly errorCode = "FLOW_NOT_SUPPORTED_ON_SPARK";
  constructor(
    readonly flow: string,
    readonly reason: string,
    readonly kind: SparkWork = "flow",
    wayOut = `or rewrite its SQL in Spark SQL and set pipelines.sqlDialect = "spark"`,
  ) {
    super(
      `${kind} "${flow}" cannot run on Spark: ${reason}; run it on DuckDB (pipelines.engine = "duckdb" or "auto", or start the update with engine "duckdb"), ${wayOut}`,
      { data: { flow, reason, kind } },
    );
  }
}

/** The Spark job of a batch failed; nothing of it was committed, and the batch runs again as planned. */
export class SparkJobFailedError extends EngineError {
  override readonly name = "SparkJobFailedError";
  override readonly errorCode = "SPARK_JOB_FAILED";
  constructor(
    readonly flow: string,
    readonly seq: number,
    readonly jobId: string,
    detail: string,
  ) {
    super(
      `flow "${flow}": the Spark job ${jobId} of batch ${seq} failed (${detail}); nothing was committed: fix the cause and start the update again (the batch runs again as planned), or run it on DuckDB (pipelines.engine = "duckdb")`,
      { data: { flow, seq, jobId } },
    );
  }
}
