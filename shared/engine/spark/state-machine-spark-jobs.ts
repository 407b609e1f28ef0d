import { ObjectNotFoundError } from "../../object-store/errors.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import {
  requestKeyOf,
  sparkManifestSchema,
  type SparkBatchRequest,
  type SparkFailure,
} from "./spark-batch-contract.ts";
import { attemptOfKey } from "./spark-job-folders.ts";
import type { SparkJobRun, SparkJobs } from "./spark-jobs.ts";

/**
 * The Spark engine on AWS (docs/spark-engine.md "On AWS"): no function waits on a job. RunFlow's
 * batch writes its request beside its manifest and hands the batch to the update state machine
 * (`SparkBatchHandedOff`, which RunFlow answers as `sparkRequest`); the machine runs the job with
 * EMR Serverless's `startJobRun.sync` and invokes RunFlow again with how the job ended (`EndedSparkJob`).
 * That invocation resumes the same planned batch, whose step finds the ended job for its request
 * here (the same attempt: its staging folder and manifest) and commits the manifest, or fails the
 * batch with the job's error.
 */

/** The request RunFlow wrote, as the state machine reads it (`$.run.sparkRequest`). */
export interface SparkRequestRef {
  /** The bucket key of the request. */
  readonly key: string;
  /** Its URI, the job's `--request` argument. */
  readonly uri: string;
  /** The job run's name: the flow and batch, for the EMR console. */
  readonly name: string;
}

/** What the state machine hands the next RunFlow (`$.run`): the request, and how its job ended. */
export interface EndedSparkJob {
  readonly sparkRequest: SparkRequestRef;
  /** The `startJobRun.sync` state's result, when the job succeeded. */
  readonly sparkJob?: { readonly JobRunId?: string; readonly ApplicationId?: string };
  /** The state's Catch, when it failed: Step Functions' error name and cause. */
  readonly sparkFailure?: { readonly Error?: string; readonly Cause?: string };
}

/** A batch handed to the state machine: not a failure, RunFlow's answer (run-step.ts). */
export class SparkBatchHandedOff extends Error {
  override readonly name = "SparkBatchHandedOff";
  constructor(readonly request: SparkRequestRef) {
    super(`the Spark batch ${request.name} is handed to the state machine (${request.uri})`);
  }
}

export class StateMachineSparkJobs implements SparkJobs {
  readonly #bucket: string;
  readonly #store: ObjectStore;
  readonly #ended: EndedSparkJob | undefined;

  /** `store` is the bucket's root view, `bucket` its name. */
  constructor(settings: { bucket: string; store: ObjectStore; ended?: EndedSparkJob }) {
    this.#bucket = settings.bucket;
    this.#store = settings.store;
    this.#ended = settings.ended;
  }

  /** The same engine, for the RunFlow invocation the state machine makes after `ended`'s job. */
  resuming(ended: EndedSparkJob | undefined): StateMachineSparkJobs {
    return new StateMachineSparkJobs({
      bucket: this.#bucket,
      store: this.#store,
      ...(ended ? { ended } : {}),
    });
  }

  bucketUri(key: string): string {
    return `s3://${this.#bucket}/${key}`;
  }

  locationUri(location: string, key: string): string {
    const root = location.replace(/\/+$/, "");
    const uri = root.startsWith("/") ? `file://${root}` : root.replace(/^s3a?:\/\//, "s3://");
    return key === "" ? `${uri}/` : `${uri}/${key}`;
  }

  /** The attempt of the ended job's request, when it is batch `seq` of `flow`'s (its key says so). */
  attemptOf(flow: string, seq: number): string | undefined {
    const key = this.#ended?.sparkRequest.key;
    return key === undefined ? undefined : attemptOfKey(key, flow, seq);
  }

  async run(request: SparkBatchRequest): Promise<SparkJobRun> {
    const key = requestKeyOf(this.#keyOf(request.manifestUri));
    const ended = this.#ended;
    if (ended?.sparkRequest.key === key) return this.#endedRun(ended, request);
    await this.#store.put(key, new TextEncoder().encode(JSON.stringify(request)));
    throw new SparkBatchHandedOff({
      key,
      uri: this.bucketUri(key),
      name: `${request.flow}-${request.txn.version}`.replace(/[^\w.-]/g, "_").slice(0, 256),
    });
  }

  async #endedRun(ended: EndedSparkJob, request: SparkBatchRequest): Promise<SparkJobRun> {
    const failed = ended.sparkFailure;
    // Without the run's id (a job the service would not start, a state that timed out), its name.
    const named = `run "${ended.sparkRequest.name}"`;
    if (!failed) return { jobId: ended.sparkJob?.JobRunId ?? named };
    const cause = parsedCause(failed.Cause);
    const jobId = cause.jobRunId ?? named;
    // The entry script writes why it failed to the manifest: Spark's own error, and its kind.
    const written = await this.#writtenFailure(request.manifestUri);
    if (written) return { jobId, failure: written };
    return {
      jobId,
      failure: {
        status: "failed",
        kind: "job",
        message: cause.detail ?? failed.Cause ?? failed.Error ?? "the job run failed",
      },
    };
  }

  async #writtenFailure(manifestUri: string): Promise<SparkFailure | undefined> {
    let bytes: Uint8Array;
    try {
      bytes = await this.#store.get(this.#keyOf(manifestUri));
    } catch (error) {
      if (error instanceof ObjectNotFoundError) return undefined;
      throw error;
    }
    const parsed = sparkManifestSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    if (!parsed.success || parsed.data.status !== "failed") return undefined;
    const { status, kind, message } = parsed.data;
    return { status, kind, message };
  }

  #keyOf(uri: string): string {
    const root = `s3://${this.#bucket}/`;
    if (!uri.startsWith(root)) throw new TypeError(`${uri} is not in the pipelines' bucket`);
    return uri.slice(root.length);
  }
}

/**
 * The job run's id and state details in a `startJobRun.sync` failure's cause (the job run as
 * GetJobRun describes it, as JSON), as far as it holds them.
 */
function parsedCause(cause: string | undefined): { jobRunId?: string; detail?: string } {
  if (!cause) return {};
  try {
    const parsed = JSON.parse(cause) as Record<string, unknown>;
    const run = (parsed["jobRun"] ?? parsed["JobRun"] ?? parsed) as Record<string, unknown>;
    const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
    const jobRunId = text(run["jobRunId"]) ?? text(run["JobRunId"]);
    const detail = text(run["stateDetails"]) ?? text(run["StateDetails"]);
    return { ...(jobRunId ? { jobRunId } : {}), ...(detail ? { detail } : {}) };
  } catch {
    return {};
  }
}
