import { Duration, RemovalPolicy, Size } from "aws-cdk-lib";
import * as apigw from "aws-cdk-lib/aws-apigateway";
import * as events from "aws-cdk-lib/aws-events";
import * as iam from "aws-cdk-lib/aws-iam";
import * as targets from "aws-cdk-lib/aws-events-targets";
import * as lambda from "aws-cdk-lib/aws-lambda";
import { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import * as logs from "aws-cdk-lib/aws-logs";
import type * as s3 from "aws-cdk-lib/aws-s3";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import * as sqs from "aws-cdk-lib/aws-sqs";
import type * as sfn from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import { API_ROUTES, CAPTURE_SCHEDULE } from "./api-routes.ts";
import { EbbStorage, type EbbStorageProps } from "./ebb-storage.ts";
import { EbbLifecycleEvents, type EbbLifecycleEventsProps } from "./ebb-lifecycle-events.ts";
import { EbbWebUi, type EbbWebUiDomain } from "./ebb-web-ui.ts";
import { grantStreamReads, streamReaderNetwork, type EbbEventStreams } from "./event-stream-access.ts";
import { TASK_ACCESS, type FunctionAccess } from "./function-access.ts";
import {
  API_HEAVY,
  FUNCTION_ARCHITECTURE,
  FUNCTION_RUNTIME,
  HEAVY,
  LIGHT,
  functionProps,
  prebuiltFunctionProps,
} from "./function-defaults.ts";
import { bindAccess, grantPrefix, type BindableResources } from "./resource-bindings.ts";
import { suppressAcceptedNagFindings } from "./nag-suppressions.ts";
import { EbbMonitoring, type EbbMonitoringOptions } from "./ebb-monitoring.ts";
import { sqlEngineLayer } from "./sql-engine-layer.ts";
import { EbbSparkEngine, type SparkMaximumCapacity } from "./ebb-spark-engine.ts";
import { ENVIRONMENT } from "../../functions/runtime/environment.ts";
import { UpdateStateMachine, type UpdateTaskFunctions } from "./update-state-machine.ts";
import {
  DEFAULT_TASK_SIZE,
  taskEnvironment,
  taskSizeIssues,
  type TaskSize,
} from "../../shared/engine/task-sizing.ts";

/** Metadata on each function naming its handler module, read by the local runtime. */
export const ENTRY_METADATA = "ebb:entry";

export interface EbbProps extends EbbStorageProps, EbbLifecycleEventsProps {
  /** When the rewind points are captured. @default every hour */
  readonly captureSchedule?: events.Schedule;
  /** How long function logs are kept. @default one month */
  readonly logRetention?: logs.RetentionDays;
  /** The API's stage (the first part of its URL path). @default "ebb" */
  readonly apiStageName?: string;
  /**
   * The web UI's built files (`ui/dist`), served by CloudFront from a private bucket.
   * @default no web UI
   */
  readonly webUiAssets?: string;
  /**
   * The prefix of the web UI's hosted sign-in domain (`<prefix>.auth.<region>.amazoncognito.com`).
   * @default `ebb-<account>-<hash of the construct's path>`
   */
  readonly signInDomainPrefix?: string;
  /** Steady requests per second the API stage accepts, and the burst above it. @default 50 and 100 */
  readonly apiThrottle?: { readonly rateLimit: number; readonly burstLimit: number };
  /**
   * Reserved concurrency of each of the nine state-machine task functions: caps how many run at once
   * (and so the load on DynamoDB and S3, and the bill of a runaway loop) and keeps that much of the
   * account's concurrency for them. A task beyond the cap is throttled and retried, then fails its
   * update. AWS keeps 100 of an account's concurrency unreserved, so a reservation needs a quota of at
   * least 9 × it + 100 (new accounts may have 10): 32 suits four updates at full width.
   * @default no reservation: a deployment to a new account would fail with any
   */
  readonly taskConcurrency?: number;
  /**
   * Which update-execution events the state machine logs (never their data).
   * @default `sfn.LogLevel.ALL`
   */
  readonly stateMachineLogLevel?: sfn.LogLevel;
  /**
   * The web UI's own domain and its certificate (us-east-1): viewers are then held to TLS 1.2 or newer.
   * @default the distribution's `*.cloudfront.net` domain (CloudFront's certificate and TLSv1 policy)
   */
  readonly webUiDomain?: EbbWebUiDomain;
  /**
   * Buckets outside Ebb's own that `auto_loader` sources read from (`s3://other-bucket/landing/`):
   * the task functions, which run the flows, get read and list on each, limited to `prefix` if given.
   * @default none: sources may read only Ebb's own bucket
   */
  readonly sourceBuckets?: readonly { readonly bucket: s3.IBucket; readonly prefix?: string }[];
  /**
   * The Kinesis streams and MSK clusters the pipelines read: the functions that read them (the update
   * tasks and start-update) get read grants, and run in the MSK cluster's VPC. @default none
   */
  readonly eventStreams?: EbbEventStreams;
  /**
   * Memory of each state-machine task function, MB (Lambda: 128 to 10,240). The SQL memory limit
   * (half of it) and the default batch bytes follow it (shared/engine/task-sizing.ts). @default 2048
   */
  readonly taskMemorySize?: number;
  /**
   * Temporary space (`/tmp`) of each task function, MB (Lambda: 512 to 10,240): a batch's input,
   * output and spill live there. The SQL spill limit (half of it) and the default batch bytes (a
   * quarter) follow it. @default 512 (Lambda's default)
   */
  readonly taskEphemeralStorageSize?: number;
  /**
   * How long a task function (and its state, `TimeoutSeconds`) may run (Lambda: up to 15 minutes).
   * The SQL time limit is two thirds of it. @default 15 minutes
   */
  readonly taskTimeout?: Duration;
  /**
   * X-Ray active tracing of every function (Powertools Tracer: each invocation and its AWS SDK calls)
   * and of the state machine's executions. @default true
   */
  readonly tracing?: boolean;
  /**
   * Alarms (update FAILED, rewind left incomplete, API INTERNAL_ERROR, a source falling behind, state
   * machine executions failed or timed out, DynamoDB throttling) and a dashboard, optionally notifying
   * an SNS topic (ebb-monitoring.ts; operations.md "Alarms"); `false` creates neither.
   * @default both, notifying no topic
   */
  readonly monitoring?: EbbMonitoringOptions | false;
  /**
   * The Spark engine (docs/spark-engine.md): an EMR Serverless application (auto-stop on, no
   * pre-initialised capacity) that runs the batches `pipelines.engine` (or an update's `engine`) gives
   * to Spark, through the update state machine's `startJobRun.sync` state.
   * @default off: a batch to run on Spark fails with SPARK_ENGINE_NOT_CONFIGURED
   */
  readonly sparkEngine?: EbbSparkEngineOptions;
}

/** `EbbProps.sparkEngine`. */
export interface EbbSparkEngineOptions {
  readonly enabled: boolean;
  /** The EMR release. @default the release the local Spark is pinned to (emr-7.13.0) */
  readonly releaseLabel?: string;
  /** The application's ceiling (all its jobs at once), e.g. `{ cpu: "64 vCPU", memory: "256 GB" }`. @default the service's quota */
  readonly maximumCapacity?: SparkMaximumCapacity;
  /** Stop the application after this long idle. @default 15 minutes */
  readonly idleTimeout?: Duration;
  /** How long one batch's job may run before it is cancelled and its batch fails. @default 12 hours */
  readonly jobTimeout?: Duration;
  /** Let `kafka` batches run on Spark: each job fetches the Kafka client from Maven Central (docs/spark-engine.md). @default false */
  readonly kafkaClient?: boolean;
  /**
   * Environment variables of each job's driver from Secrets Manager secrets: the `password_env` and
   * `tls.ca_env` of the `kafka` sources whose batches may run on Spark (docs/spark-engine.md). @default none
   */
  readonly environmentSecrets?: Readonly<Record<string, secretsmanager.ISecret>>;
}

/**
 * The whole of Ebb as one construct (architecture.md "Two ways to run, one stack"): storage, the
 * API's functions behind a REST API with IAM auth on every method, the update state machine with its
 * task functions, and the hourly capture of rewind points. Add it to any CDK app.
 */
export class Ebb extends Construct {
  readonly storage: EbbStorage;
  readonly api: apigw.RestApi;
  readonly stateMachine: sfn.StateMachine;
  readonly captureRule: events.Rule;
  /** The bus and schema registry of Ebb's lifecycle events (docs/events.md). */
  readonly lifecycleEvents: EbbLifecycleEvents;
  readonly webUi?: EbbWebUi;
  /** The alarms and dashboard, unless `monitoring: false`. */
  readonly monitoring?: EbbMonitoring;
  /** The EMR Serverless application and job role, when `sparkEngine` is enabled. */
  readonly sparkEngine?: EbbSparkEngine;
  /** DuckDB and polyglot-sql, uploaded once and shared by every function. */
  readonly sqlEngineLayer: lambda.LayerVersion;
  /** Every function, by construct id. */
  readonly functions = new Map<string, lambda.Function>();
  private readonly logRetention: logs.RetentionDays;
  private readonly eventStreams: EbbEventStreams;
  private readonly tracing: boolean;

  constructor(scope: Construct, id: string, props: EbbProps = {}) {
    super(scope, id);
    const taskSize = taskSizeOf(props);
    this.logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    this.eventStreams = props.eventStreams ?? {};
    this.tracing = props.tracing ?? true;
    this.sqlEngineLayer = sqlEngineLayer(this, "SqlEngineLayer", FUNCTION_RUNTIME, FUNCTION_ARCHITECTURE);
    this.storage = new EbbStorage(this, "Storage", {
      ...(props.noncurrentVersionRetention !== undefined
        ? { noncurrentVersionRetention: props.noncurrentVersionRetention }
        : {}),
      ...(props.accessLogRetention !== undefined ? { accessLogRetention: props.accessLogRetention } : {}),
    });
    this.lifecycleEvents = new EbbLifecycleEvents(this, "LifecycleEvents", {
      ...(props.eventBus !== undefined ? { eventBus: props.eventBus } : {}),
    });
    const resources: BindableResources = {
      eventBus: this.lifecycleEvents.eventBus,
      tables: {
        pipelines: this.storage.pipelines,
        updates: this.storage.updates,
        checkpoints: this.storage.checkpoints,
        eventLog: this.storage.eventLog,
      },
      bucket: this.storage.bucket,
    };

    // A task that ends a stage of an update (its start, a rewind, the resets, its end) publishes it.
    const task = (entry: string, lifecycleEvents = false) => {
      const access = { ...TASK_ACCESS, lifecycleEvents };
      const fn = this.fn(`tasks/${entry}`, access, resources, false, props.taskConcurrency, taskSize);
      for (const [name, value] of Object.entries(taskEnvironment(taskSize))) fn.addEnvironment(name, value);
      for (const source of props.sourceBuckets ?? [])
        grantPrefix(fn, source.bucket, source.prefix ?? "", "read");
      return fn;
    };
    const runFlow = task("run-flow.ts");
    const taskFunctions: UpdateTaskFunctions = {
      planUpdate: task("plan-update.ts", true),
      rewindDataset: task("rewind-dataset.ts"),
      finishRewind: task("finish-rewind.ts", true),
      resetDatasets: task("reset-datasets.ts", true),
      runFlow,
      finishUpdate: task("finish-update.ts", true),
      failUpdate: task("fail-update.ts", true),
      nextCycle: task("next-cycle.ts"),
      continueUpdate: task("continue-update.ts"),
    };
    if (props.sparkEngine?.enabled) {
      const options = props.sparkEngine;
      this.sparkEngine = new EbbSparkEngine(this, "SparkEngine", {
        bucket: this.storage.bucket,
        logRetention: this.logRetention,
        ...(options.releaseLabel !== undefined ? { releaseLabel: options.releaseLabel } : {}),
        ...(options.maximumCapacity !== undefined ? { maximumCapacity: options.maximumCapacity } : {}),
        ...(options.idleTimeout !== undefined ? { idleTimeout: options.idleTimeout } : {}),
        ...(options.jobTimeout !== undefined ? { jobTimeout: options.jobTimeout } : {}),
        ...(options.kafkaClient !== undefined ? { kafkaClient: options.kafkaClient } : {}),
        ...(options.environmentSecrets !== undefined
          ? { environmentSecrets: options.environmentSecrets }
          : {}),
        // Its Kafka batches dial the same brokers the update tasks do, from the same network.
        ...(this.eventStreams.msk ? { network: this.eventStreams.msk } : {}),
        ...(props.sourceBuckets !== undefined ? { sourceBuckets: props.sourceBuckets } : {}),
      });
      // RunFlow hands Spark batches to the state machine (it writes their requests, never starts a job).
      runFlow.addEnvironment(ENVIRONMENT.sparkApplication, this.sparkEngine.application.attrApplicationId);
    }
    this.stateMachine = new UpdateStateMachine(this, "Updates", {
      ...(this.sparkEngine ? { spark: this.sparkEngine } : {}),
      functions: taskFunctions,
      taskTimeoutSeconds: taskSize.timeoutSeconds,
      logRetention: this.logRetention,
      ...(props.stateMachineLogLevel !== undefined ? { logLevel: props.stateMachineLogLevel } : {}),
      tracing: this.tracing,
    }).stateMachine;
    // ContinueUpdate and FinishUpdate start the next execution of this very state machine (a hand-over),
    // whose ARN they take from the context object. The grant is a policy of its own: the functions do
    // not wait for it, so function → state machine → function is no dependency cycle.
    new iam.Policy(this, "ContinueUpdatePolicy", {
      roles: [taskFunctions.continueUpdate, taskFunctions.finishUpdate].map(
        (fn) => (fn as lambda.Function).role as iam.IRole,
      ),
      statements: [
        new iam.PolicyStatement({
          actions: ["states:StartExecution"],
          resources: [this.stateMachine.stateMachineArn],
        }),
      ],
    });
    const withMachine = { ...resources, stateMachine: this.stateMachine };

    this.api = new apigw.RestApi(this, "Api", {
      description: "Ebb: pipelines, updates, rewind and time travel (api.md)",
      defaultMethodOptions: { authorizationType: apigw.AuthorizationType.IAM },
      deployOptions: {
        stageName: props.apiStageName ?? "ebb",
        throttlingRateLimit: props.apiThrottle?.rateLimit ?? 50,
        throttlingBurstLimit: props.apiThrottle?.burstLimit ?? 100,
        accessLogDestination: new apigw.LogGroupLogDestination(
          new logs.LogGroup(this, "ApiAccessLogs", {
            retention: this.logRetention,
            removalPolicy: RemovalPolicy.DESTROY,
          }),
        ),
        accessLogFormat: apigw.AccessLogFormat.jsonWithStandardFields(),
        // Every method's errors in the execution log, without request and response bodies.
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
      // Access logs need the account's API Gateway role for CloudWatch; kept when the stack goes, as
      // the setting is the account's, not the stack's.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
    });
    for (const route of API_ROUTES) {
      const handler = this.fn(route.entry, route.access, withMachine, true);
      this.api.root
        .resourceForPath(route.path)
        .addMethod(route.method, new apigw.LambdaIntegration(handler, { allowTestInvoke: false }));
    }

    const capture = this.fn(CAPTURE_SCHEDULE.entry, CAPTURE_SCHEDULE.access, resources);
    this.captureRule = new events.Rule(this, "CaptureSchedule", {
      description: "Captures a rewind point for every rewind-enabled pipeline",
      schedule: props.captureSchedule ?? events.Schedule.rate(Duration.hours(1)),
      // Retried twice within the hour; an event that still fails is kept for two weeks to look at.
      targets: [
        new targets.LambdaFunction(capture, {
          retryAttempts: 2,
          maxEventAge: Duration.hours(1),
          deadLetterQueue: new sqs.Queue(this, "CaptureDeadLetters", {
            encryption: sqs.QueueEncryption.SQS_MANAGED,
            enforceSSL: true,
            retentionPeriod: Duration.days(14),
          }),
        }),
      ],
    });

    if (props.webUiAssets !== undefined) {
      this.webUi = new EbbWebUi(this, "WebUi", {
        assets: props.webUiAssets,
        api: this.api,
        accessLogs: this.storage.accessLogs,
        ...(props.webUiDomain !== undefined ? { domain: props.webUiDomain } : {}),
        ...(props.signInDomainPrefix !== undefined ? { signInDomainPrefix: props.signInDomainPrefix } : {}),
      });
    }
    if (props.monitoring !== false) {
      this.monitoring = new EbbMonitoring(this, "Monitoring", {
        ...props.monitoring,
        stateMachine: this.stateMachine,
        tables: Object.values(resources.tables),
      });
    }
    suppressAcceptedNagFindings(this, { webUiDomain: props.webUiDomain !== undefined });
  }

  private fn(
    entry: string,
    access: FunctionAccess,
    resources: BindableResources,
    api = false,
    reservedConcurrency?: number,
    taskSize?: TaskSize,
  ): lambda.Function {
    const id = constructId(entry);
    const size = taskSize
      ? {
          memorySize: taskSize.memoryMb,
          timeout: Duration.seconds(taskSize.timeoutSeconds),
          ephemeralStorageSize: Size.mebibytes(taskSize.ephemeralStorageMb),
        }
      : access.heavy
        ? api
          ? API_HEAVY
          : HEAVY
        : LIGHT;
    const logGroup = new logs.LogGroup(this, `${id}Logs`, {
      retention: this.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const network = access.eventStreams ? streamReaderNetwork(this.eventStreams) : {};
    const common = {
      layers: [this.sqlEngineLayer],
      ...network,
      logGroup,
      tracing: this.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      ...(reservedConcurrency !== undefined ? { reservedConcurrentExecutions: reservedConcurrency } : {}),
    };
    // Installed from the package, the functions come bundled; in Ebb's repository, esbuild bundles them.
    const prebuilt = prebuiltFunctionProps(entry, size);
    const fn = prebuilt
      ? new lambda.Function(this, id, { ...prebuilt, ...common })
      : new NodejsFunction(this, id, { ...functionProps(entry, size), ...common });
    // Without active tracing there is no segment to add to: Powertools Tracer stays off.
    if (!this.tracing) fn.addEnvironment(TRACE_ENABLED_VARIABLE, "false");
    (fn.node.defaultChild as lambda.CfnFunction).addMetadata(ENTRY_METADATA, `functions/${entry}`);
    bindAccess(fn, access, resources);
    if (access.eventStreams) grantStreamReads(fn, this.eventStreams);
    this.functions.set(id, fn);
    return fn;
  }
}

/** Powertools Tracer's switch (environment.md). */
const TRACE_ENABLED_VARIABLE = "POWERTOOLS_TRACE_ENABLED";

/** `tasks/plan-update.ts` → `TaskPlanUpdate`. */
function constructId(entry: string): string {
  return entry
    .replace(/\.ts$/, "")
    .split(/[/-]/)
    .map((part) => (part === "tasks" ? "Task" : part.charAt(0).toUpperCase() + part.slice(1)))
    .join("");
}

/** The task functions' size from the props, checked against what Lambda allows. */
function taskSizeOf(props: EbbProps): TaskSize {
  const size: TaskSize = {
    memoryMb: props.taskMemorySize ?? DEFAULT_TASK_SIZE.memoryMb,
    ephemeralStorageMb: props.taskEphemeralStorageSize ?? DEFAULT_TASK_SIZE.ephemeralStorageMb,
    timeoutSeconds: props.taskTimeout?.toSeconds() ?? DEFAULT_TASK_SIZE.timeoutSeconds,
  };
  const issues = taskSizeIssues(size);
  if (issues.length > 0) throw new RangeError(`Ebb: ${issues.join("; ")}`);
  return size;
}
