/** Whether the Spark engine's Python and jars are installed (functions/spark/setup.sh): its tests skip without them. */
export const sparkEngineReady =
  process.env["EBB_SPARK_PYTHON"] !== undefined && process.env["EBB_SPARK_JARS"] !== undefined;
