import type { ObjectStore } from "../../shared/object-store/object-store.ts";
import type { SparkBatchRequest } from "../../shared/engine/spark/spark-batch-contract.ts";
import type { SparkJobs } from "../../shared/engine/spark/spark-jobs.ts";
import type { ServiceTask } from "./local-step-functions.ts";

/**
 * The update state machine's EMR Serverless state (`emr-serverless:startJobRun.sync`), run locally:
 * the job's `--request` is read from the bucket and run by a Spark engine of this machine (the local
 * runtime's `spark-submit` driver, the entry script EMR runs, behind the same port), and the state
 * ends as the `.sync` integration ends it: with the job run's id on success, failed with
 * `States.TaskFailed` and the job run as its cause otherwise. No stand-in computes anything.
 */

export const START_JOB_RUN_SYNC = "arn:aws:states:::emr-serverless:startJobRun.sync";

/** The job run a failed `.sync` state carries as its cause (GetJobRun's shape, as far as Ebb reads it). */
export class JobRunFailedError extends Error {
  override readonly name = "States.TaskFailed";
}

interface StartJobRunInput {
  readonly ApplicationId?: string;
  readonly JobDriver?: { readonly SparkSubmit?: { readonly EntryPointArguments?: readonly string[] } };
}

export function localEmrServerless(settings: {
  /** The pipelines' bucket: its name, and its store (root view). */
  readonly bucket: string;
  readonly store: ObjectStore;
  readonly spark: SparkJobs;
}): Record<string, ServiceTask> {
  const run: ServiceTask = async (input) => {
    const { ApplicationId: applicationId = "local", JobDriver } = input as StartJobRunInput;
    const args = JobDriver?.SparkSubmit?.EntryPointArguments ?? [];
    const uri = args[0] === "--request" ? args[1] : undefined;
    const root = `s3://${settings.bucket}/`;
    if (!uri?.startsWith(root))
      throw new TypeError(`the job's arguments ${JSON.stringify(args)} name no request`);
    const request = JSON.parse(
      new TextDecoder().decode(await settings.store.get(uri.slice(root.length))),
    ) as SparkBatchRequest;
    const ended = await settings.spark.run(request);
    if (ended.failure) {
      throw new JobRunFailedError(
        JSON.stringify({
          jobRun: {
            applicationId,
            jobRunId: ended.jobId,
            state: "FAILED",
            stateDetails: `Job failed: ${ended.failure.message}`,
          },
        }),
      );
    }
    return { ApplicationId: applicationId, JobRunId: ended.jobId, State: "SUCCESS" };
  };
  return { [START_JOB_RUN_SYNC]: run };
}
