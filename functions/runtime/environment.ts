import { CodedError } from "../../shared/errors/coded-error.ts";
import { TABLE_ENVIRONMENT } from "../../shared/store/repository-tables.ts";

/**
 * The environment variables a function reads, each set by the CDK stack together with the grant that
 * makes it usable (`bindTable` / `bindBucket` / `bindStateMachine` in infra/aws). A function reads
 * only what it uses, once, and a missing one fails loudly with its name.
 */
export const ENVIRONMENT = {
  ...TABLE_ENVIRONMENT,
  bucket: "EBB_BUCKET",
  stateMachineArn: "EBB_STATE_MACHINE_ARN",
  /** Where the local runtime serves the Step Functions API (unset on AWS). */
  stepFunctionsEndpoint: "AWS_ENDPOINT_URL_SFN",
  /** The local runtime's folders sources may read, as a JSON array of absolute paths (unset on AWS). */
  localRoots: "EBB_LOCAL_ROOTS",
  /** The local Spark engine's python and jars (functions/spark/setup.sh; unset: no local Spark). */
  sparkPython: "EBB_SPARK_PYTHON",
  sparkJars: "EBB_SPARK_JARS",
  /** The EMR Serverless application whose batches the state machine runs (set on RunFlow when the construct's `sparkEngine` is on). */
  sparkApplication: "EBB_SPARK_APPLICATION_ID",
  /** The EventBridge bus lifecycle events go on (docs/events.md; unset locally). */
  eventBus: "EBB_EVENT_BUS_NAME",
  /** Where the local runtime POSTs lifecycle events (`npm start --webhook`; unset: nowhere). */
  eventsWebhook: "EBB_EVENTS_WEBHOOK",
  /** The SDK's own variable for an EventBridge stand-in (unset on AWS). */
  eventBridgeEndpoint: "AWS_ENDPOINT_URL_EVENTBRIDGE",
} as const;

export class MissingEnvironmentError extends CodedError {
  override readonly name = "MissingEnvironmentError";
  constructor(readonly variable: string) {
    super(
      `the environment variable ${variable} is not set: this function was deployed without the resource it needs`,
    );
  }
}

export function requiredEnv(variable: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[variable];
  if (value === undefined || value === "") throw new MissingEnvironmentError(variable);
  return value;
}
