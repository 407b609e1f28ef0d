import type { SparkBatchRequest, SparkFailure } from "./spark-batch-contract.ts";

/**
 * The port a batch's step calls to run it on Spark (the local runtime's long-lived `spark-submit`
 * driver; on AWS, an EMR Serverless job run). The job writes its data files and manifest where the
 * request says; the caller reads the manifest and commits (micro-batch.ts step 4).
 */
export interface SparkJobs {
  /** The URI the job reads or writes for `key` of the pipelines' bucket. */
  bucketUri(key: string): string;
  /** The URI of `key` under a source location (`s3://bucket/prefix`, or a local folder). */
  locationUri(location: string, key: string): string;
  /**
   * Runs the batch until its job ends. Resolves with the job's id and, when it failed, why (also
   * when the job was killed: `kind: "job"`); rejects only when the job could not be started.
   */
  run(request: SparkBatchRequest): Promise<SparkJobRun>;
  /**
   * The attempt whose job for batch `seq` of `flow` has already ended, where the port holds one (on
   * AWS, the state machine ran it between two RunFlow invocations): the batch names that attempt's
   * staging folder and manifest, not a fresh one.
   */
  attemptOf?(flow: string, seq: number): string | undefined;
}

export interface SparkJobRun {
  /** The Spark job's id (an EMR Serverless job run id; locally, the driver's application id). */
  readonly jobId: string;
  readonly failure?: SparkFailure;
}
