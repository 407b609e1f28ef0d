import type { SparkJobs } from "../../shared/engine/spark/spark-jobs.ts";
import { StateMachineSparkJobs } from "../../shared/engine/spark/state-machine-spark-jobs.ts";
import { localSparkFromEnv } from "./local-spark-jobs.ts";
import { realpathSync } from "node:fs";
import { SFNClient } from "@aws-sdk/client-sfn";
import { z } from "zod";
import { checkSourceLocation } from "../../shared/pipeline/source-location-policy.ts";
import type { ControlPlane } from "../../shared/control/plane/control-plane.ts";
import type { UpdateExecutions } from "../../shared/control/plane/update-executions.ts";
import { removeLeftoverScratchFolders } from "../../shared/duck/scratch-folder.ts";
import { SqlReferenceParser } from "../../shared/pipeline/sql-references.ts";
import type { SqlAnalyzer } from "../../shared/pipeline/validate-pipeline.ts";
import {
  AWS_CALL_LIMITS,
  createDocumentClient,
  createS3Client,
  endpointsFromEnv,
  limitedCalls,
} from "../../shared/store/aws-clients.ts";
import { DynamoCheckpointsRepository } from "../../shared/store/dynamo-checkpoints-repository.ts";
import { DynamoEventLogRepository } from "../../shared/store/dynamo-event-log-repository.ts";
import { DynamoPipelinesRepository } from "../../shared/store/dynamo-pipelines-repository.ts";
import { DynamoUpdatesRepository } from "../../shared/store/dynamo-updates-repository.ts";
import { networkEventStreams } from "../../shared/store/event-stream-clients.ts";
import { LocalObjectStore } from "../../shared/object-store/local-object-store.ts";
import type { ObjectStore } from "../../shared/object-store/object-store.ts";
import { S3ObjectStore } from "../../shared/object-store/s3-object-store.ts";
import { ENVIRONMENT, requiredEnv } from "./environment.ts";
import { SfnUpdateExecutions } from "./sfn-update-executions.ts";
import { PowertoolsMetricsSink } from "./ebb-metrics.ts";
import { traced } from "./ebb-tracer.ts";
import { meteredEventLog } from "../../shared/control/metrics/metered-event-log.ts";
import type { MetricsSink } from "../../shared/control/metrics/metric-points.ts";
import { EventBridgeLifecycleEvents } from "./eventbridge-lifecycle-events.ts";
import { WebhookLifecycleEvents } from "./webhook-lifecycle-events.ts";
import { NO_LIFECYCLE_EVENTS, type LifecycleEvents } from "../../shared/control/plane/lifecycle-events.ts";
import { InvalidParameterError } from "../../shared/errors/coded-error.ts";

/**
 * The control plane of a Lambda function (or of the local runtime, which sets the same variables):
 * AWS adapters behind the ports, each made on first use from its environment variable, so a function
 * needs (and is granted) only what it touches. One per process, as Lambda reuses it across invocations.
 */
export class EnvironmentControlPlane implements ControlPlane {
  readonly clock = Date.now;
  readonly #env: NodeJS.ProcessEnv;
  readonly #made = new Map<string, unknown>();

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.#env = env;
  }

  #once<T>(key: string, make: () => T): T {
    if (!this.#made.has(key)) this.#made.set(key, make());
    return this.#made.get(key) as T;
  }

  get #documents() {
    return this.#once("documents", () => traced(createDocumentClient(endpointsFromEnv(this.#env))));
  }

  get #s3() {
    return this.#once("s3", () => traced(createS3Client(endpointsFromEnv(this.#env))));
  }

  get pipelines() {
    return this.#once("pipelines", () => {
      const tableName = requiredEnv(ENVIRONMENT.pipelines, this.#env);
      return new DynamoPipelinesRepository({ client: this.#documents, tableName });
    });
  }

  get updates() {
    return this.#once("updates", () => {
      const tableName = requiredEnv(ENVIRONMENT.updates, this.#env);
      return new DynamoUpdatesRepository({ client: this.#documents, tableName });
    });
  }

  get checkpoints() {
    return this.#once("checkpoints", () => {
      const tableName = requiredEnv(ENVIRONMENT.checkpoints, this.#env);
      const pipelinesTableName = requiredEnv(ENVIRONMENT.pipelines, this.#env);
      return new DynamoCheckpointsRepository({ client: this.#documents, tableName, pipelinesTableName });
    });
  }

  get events() {
    return this.#once("events", () => {
      const tableName = requiredEnv(ENVIRONMENT.eventLog, this.#env);
      return meteredEventLog(
        new DynamoEventLogRepository({ client: this.#documents, tableName }),
        this.metrics,
      );
    });
  }

  get metrics(): MetricsSink {
    return this.#once("metrics", () => new PowertoolsMetricsSink());
  }

  get bucket(): ObjectStore {
    return this.#once("bucket", () => {
      const bucket = requiredEnv(ENVIRONMENT.bucket, this.#env);
      return new S3ObjectStore({ client: this.#s3, bucket });
    });
  }

  /**
   * The Spark engine: on AWS with the construct's `sparkEngine` on, batches handed to the state
   * machine's EMR Serverless state; else the local runtime's when the environment names one.
   */
  get spark(): SparkJobs | undefined {
    return this.#once("spark", () =>
      this.#env[ENVIRONMENT.sparkApplication]
        ? new StateMachineSparkJobs({
            bucket: requiredEnv(ENVIRONMENT.bucket, this.#env),
            store: this.bucket,
          })
        : localSparkFromEnv(this.#env, () => requiredEnv(ENVIRONMENT.bucket, this.#env)),
    );
  }

  get localRoots(): readonly string[] {
    return this.#once("localRoots", () => localRootsFrom(this.#env[ENVIRONMENT.localRoots]));
  }

  /** `s3://bucket/prefix`, or (the local runtime) a folder of this machine under one of its roots. */
  readonly locate = (location: string): ObjectStore => {
    // A symbolic link under a root must not lead out of it: judge the folder it resolves to.
    const real = location.startsWith("/") ? realFolder(location) : location;
    checkSourceLocation(real, this.localRoots);
    if (location.startsWith("/")) return new LocalObjectStore(real);
    const match = /^s3a?:\/\/([^/]+)\/?(.*)$/.exec(location);
    if (!match) {
      throw new InvalidParameterError(
        `source location ${JSON.stringify(location)} is not an s3:// URI or a folder`,
      );
    }
    const [, bucket, key] = match as unknown as [string, string, string];
    const prefix = key === "" || key.endsWith("/") ? key : `${key}/`;
    return new S3ObjectStore({ client: this.#s3, bucket, prefix });
  };

  /** Over the network, as each source's settings say; a client library loads on its first use. */
  readonly eventStreams = networkEventStreams;

  get executions(): UpdateExecutions {
    return this.#once("executions", () => {
      const endpoint = this.#env[ENVIRONMENT.stepFunctionsEndpoint];
      const endpoints = endpointsFromEnv(this.#env);
      const client = traced(
        new SFNClient({
          ...limitedCalls(AWS_CALL_LIMITS.idleMs.other),
          ...(endpoints.region ? { region: endpoints.region } : {}),
          ...(endpoint ? { endpoint } : {}),
        }),
      );
      return new SfnUpdateExecutions(client, () => requiredEnv(ENVIRONMENT.stateMachineArn, this.#env));
    });
  }

  /** An EventBridge bus on AWS; locally a webhook, when one is given; else nobody (docs/events.md). */
  get lifecycle(): LifecycleEvents {
    return this.#once("lifecycle", () => {
      const busName = this.#env[ENVIRONMENT.eventBus];
      if (busName) {
        const endpoint = this.#env[ENVIRONMENT.eventBridgeEndpoint];
        return new EventBridgeLifecycleEvents({
          busName,
          region: requiredEnv("AWS_REGION", this.#env),
          ...(endpoint ? { endpoint } : {}),
        });
      }
      const webhook = this.#env[ENVIRONMENT.eventsWebhook];
      return webhook ? new WebhookLifecycleEvents(webhook) : NO_LIFECYCLE_EVENTS;
    });
  }

  get sql(): SqlAnalyzer {
    return this.#once("sql", () => {
      // DuckDB starts on the first definition to validate, not at cold start.
      const opening = SqlReferenceParser.open();
      return {
        analyze: async (sql: string) => (await opening).analyze(sql),
        analyzeCondition: async (condition: string) => (await opening).analyzeCondition(condition),
        deparse: async (statement: unknown) => (await opening).deparse(statement),
      };
    });
  }
}

function localRootsFrom(text: string | undefined): readonly string[] {
  if (text === undefined || text === "") return [];
  const roots = z.array(z.string().startsWith("/")).safeParse(JSON.parse(text));
  if (!roots.success)
    throw new Error(`${ENVIRONMENT.localRoots} must be a JSON array of absolute folders, not ${text}`);
  return roots.data.map(realFolder);
}

function realFolder(folder: string): string {
  try {
    return realpathSync.native(folder);
  } catch {
    return folder; // not there (yet): judged as written
  }
}

let shared: ControlPlane | undefined;

/**
 * Drops the process's control plane, so the next invocation makes it anew from the environment: a
 * local runtime started again in the same process (a test worker running several files) sets its own
 * endpoints (its Step Functions' port), which the old one's clients still name.
 */
export function forgetControlPlane(): void {
  shared = undefined;
}

/**
 * The process's control plane. Made at a cold start, which is also when scratch folders a killed
 * predecessor left in `/tmp` (a timeout ends a Lambda without cleanup) are removed.
 */
export function controlPlane(): ControlPlane {
  if (shared === undefined) {
    shared = new EnvironmentControlPlane();
    removeLeftoverScratchFolders().catch((error: unknown) =>
      console.warn("could not remove leftover scratch folders", error),
    );
  }
  return shared;
}
