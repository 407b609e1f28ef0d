import path from "node:path";
import { fileURLToPath } from "node:url";
import { Duration, IgnoreMode, RemovalPolicy, Stack } from "aws-cdk-lib";
import * as emrserverless from "aws-cdk-lib/aws-emrserverless";
import * as iam from "aws-cdk-lib/aws-iam";
import * as logs from "aws-cdk-lib/aws-logs";
import type * as s3 from "aws-cdk-lib/aws-s3";
import * as assets from "aws-cdk-lib/aws-s3-assets";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import * as sfn from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import {
  sparkNetworkConfiguration,
  sparkSecretEnvironment,
  type SparkJobNetwork,
} from "./spark-job-reach.ts";

/**
 * The Spark engine on AWS: an EMR Serverless application (a release with Spark and Delta Lake; no
 * pre-initialised capacity unless asked, auto-stop on), the job role with the least privilege a batch
 * needs (read the entry script, read a batch's input and write its staged files and manifest under the
 * bucket's prefixes, write its logs), and the entry script (functions/spark/ebb_spark_batch.py) as an
 * asset. `runBatchState` is the Step Functions state that runs one batch with the service's own
 * integration (`emr-serverless:startJobRun.sync`): the state machine waits, no function does.
 */

/**
 * emr-7.13.0: Spark 3.5.6-amzn-2 and Delta Lake 3.3.2-amzn-2 (EMR Release Guide, "Spark release
 * history" and "Delta release history"); functions/spark/requirements.txt pins the local runtime's
 * pyspark and delta-spark to the same versions.
 */
export const EMR_RELEASE_LABEL = "emr-7.13.0";

/** The EMR Serverless application's ceiling: what all its running jobs may hold at once. */
export interface SparkMaximumCapacity {
  /** vCPUs, as EMR Serverless writes them ("400 vCPU"). */
  readonly cpu: string;
  /** Memory ("3000 GB"). */
  readonly memory: string;
  /** Disk ("20000 GB"). @default none beyond the service's */
  readonly disk?: string;
}

export interface EbbSparkEngineProps {
  /** The pipelines' bucket. */
  readonly bucket: s3.IBucket;
  /** The EMR release. @default EMR_RELEASE_LABEL, the release the local Spark is pinned to */
  readonly releaseLabel?: string;
  /** The application's ceiling on resources (and so on a runaway job's bill). @default the service's quota */
  readonly maximumCapacity?: SparkMaximumCapacity;
  /** Buckets (and prefixes) of auto_loader sources outside Ebb's own, which a batch reads. @default none */
  readonly sourceBuckets?: readonly { readonly bucket: s3.IBucket; readonly prefix?: string }[];
  /** Workers kept warm (pre-initialised capacity): none by default, a batch waits for workers to start. @default 0 */
  readonly warmWorkers?: number;
  /** Stop the application after this long idle. @default 15 minutes */
  readonly idleTimeout?: Duration;
  readonly logRetention?: logs.RetentionDays;
  /** How long one batch's job may run before it is cancelled and the batch fails. @default 12 hours (EMR Serverless's own default) */
  readonly jobTimeout?: Duration;
  /**
   * Let `kafka` batches run on Spark: each job fetches `KAFKA_CLIENTS_PACKAGE` from Maven Central at
   * its start (`spark.jars.packages`), so the application needs a way out to it. @default false: a
   * Kafka batch sent to Spark fails naming the missing client
   */
  readonly kafkaClient?: boolean;
  /** Run the application's workers in a VPC (to reach brokers there, as MSK's are). @default none: the service's own network */
  readonly network?: SparkJobNetwork;
  /**
   * Environment variables of each job's driver, each the value of a Secrets Manager secret (resolved
   * by EMR Serverless when the job starts): the `password_env` and `tls.ca_env` a `kafka` source
   * names. The job role may read these secrets and no other. @default none
   */
  readonly environmentSecrets?: Readonly<Record<string, secretsmanager.ISecret>>;
}

/**
 * The Kafka client the job reads a `kafka` batch's offsets with (functions/spark/ebb_spark_kafka.py):
 * the version functions/spark/pom.xml pins for the local Spark (a unit test holds the two together).
 */
export const KAFKA_CLIENTS_PACKAGE = "org.apache.kafka:kafka-clients:3.4.1";

const ENTRY_SCRIPT = fileURLToPath(new URL("../../functions/spark/ebb_spark_batch.py", import.meta.url));
/** The entry script's sibling modules (expectations, stateful operators): one zip on the job's `--py-files`. */
const JOB_MODULES = path.dirname(ENTRY_SCRIPT);

/** Prefixes of the bucket a batch reads and writes: tables (input and staged files), manifests. */
export const SPARK_JOB_PREFIXES = { tables: "tables/", state: "state/" } as const;

export class EbbSparkEngine extends Construct {
  readonly application: emrserverless.CfnApplication;
  readonly jobRole: iam.Role;
  readonly entryScript: assets.Asset;
  readonly jobModules: assets.Asset;
  readonly logGroup: logs.LogGroup;
  readonly jobTimeout: Duration;
  readonly #kafkaClient: boolean;

  constructor(scope: Construct, id: string, props: EbbSparkEngineProps) {
    super(scope, id);
    const warm = props.warmWorkers ?? 0;
    this.jobTimeout = props.jobTimeout ?? Duration.hours(12);
    this.#kafkaClient = props.kafkaClient ?? false;
    this.application = new emrserverless.CfnApplication(this, "Application", {
      releaseLabel: props.releaseLabel ?? EMR_RELEASE_LABEL,
      type: "SPARK",
      ...(props.maximumCapacity ? { maximumCapacity: { ...props.maximumCapacity } } : {}),
      ...(props.network ? { networkConfiguration: sparkNetworkConfiguration(this, props.network) } : {}),
      autoStartConfiguration: { enabled: true },
      autoStopConfiguration: {
        enabled: true,
        idleTimeoutMinutes: (props.idleTimeout ?? Duration.minutes(15)).toMinutes(),
      },
      ...(warm > 0
        ? {
            initialCapacity: [
              {
                key: "Driver",
                value: { workerCount: 1, workerConfiguration: { cpu: "2vCPU", memory: "8GB" } },
              },
              {
                key: "Executor",
                value: { workerCount: warm, workerConfiguration: { cpu: "4vCPU", memory: "16GB" } },
              },
            ],
          }
        : {}),
    });
    this.entryScript = new assets.Asset(this, "EntryScript", { path: ENTRY_SCRIPT });
    this.jobModules = new assets.Asset(this, "JobModules", {
      path: JOB_MODULES,
      exclude: ["*", "!*.py"],
      ignoreMode: IgnoreMode.GLOB,
    });
    this.logGroup = new logs.LogGroup(this, "JobLogs", {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.jobRole = new iam.Role(this, "JobRole", {
      assumedBy: new iam.ServicePrincipal("emr-serverless.amazonaws.com"),
      description: "An Ebb Spark batch: reads its planned input, writes staged files and its manifest",
    });
    this.entryScript.grantRead(this.jobRole);
    this.jobModules.grantRead(this.jobRole);
    const bucket = props.bucket;
    this.jobRole.addToPolicy(
      new iam.PolicyStatement({
        actions: ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
        resources: [
          bucket.arnForObjects(`${SPARK_JOB_PREFIXES.tables}*`),
          bucket.arnForObjects(`${SPARK_JOB_PREFIXES.state}*`),
        ],
      }),
    );
    this.jobRole.addToPolicy(
      new iam.PolicyStatement({
        actions: ["s3:ListBucket"],
        resources: [bucket.bucketArn],
        conditions: {
          StringLike: { "s3:prefix": [`${SPARK_JOB_PREFIXES.tables}*`, `${SPARK_JOB_PREFIXES.state}*`] },
        },
      }),
    );
    for (const source of props.sourceBuckets ?? []) {
      const prefix = source.prefix ?? "";
      this.jobRole.addToPolicy(
        new iam.PolicyStatement({
          actions: ["s3:GetObject"],
          resources: [source.bucket.arnForObjects(`${prefix}*`)],
        }),
      );
      this.jobRole.addToPolicy(
        new iam.PolicyStatement({
          actions: ["s3:ListBucket"],
          resources: [source.bucket.bucketArn],
          conditions: { StringLike: { "s3:prefix": [`${prefix}*`] } },
        }),
      );
    }
    if (bucket.encryptionKey) bucket.encryptionKey.grantEncryptDecrypt(this.jobRole);
    this.application.runtimeConfiguration = sparkSecretEnvironment(
      props.environmentSecrets ?? {},
      this.jobRole,
    );
    this.logGroup.grantWrite(this.jobRole);
    this.jobRole.addToPolicy(
      new iam.PolicyStatement({ actions: ["logs:DescribeLogGroups"], resources: ["*"] }),
    );
  }

  /**
   * The state that runs one Spark batch: `requestUriPath` names the request's S3 URI in the state's
   * input (written by the step before), `namePath` the job run's name if given. The job run's id lands
   * at `resultPath`; throttling and internal errors of the service are retried, any other failure is
   * for the caller's Catch.
   */
  runBatchState(
    id: string,
    options: { readonly requestUriPath: string; readonly resultPath: string; readonly namePath?: string },
  ) {
    const stack = Stack.of(this);
    const state = new sfn.CustomState(this, id, {
      stateJson: {
        Type: "Task",
        Resource: `arn:${stack.partition}:states:::emr-serverless:startJobRun.sync`,
        Parameters: {
          ApplicationId: this.application.attrApplicationId,
          ExecutionRoleArn: this.jobRole.roleArn,
          ...(options.namePath ? { "Name.$": options.namePath } : { Name: "ebb-batch" }),
          JobDriver: {
            SparkSubmit: {
              EntryPoint: this.entryScript.s3ObjectUrl,
              "EntryPointArguments.$": `States.Array('--request', ${options.requestUriPath})`,
              SparkSubmitParameters: [
                `--py-files ${this.jobModules.s3ObjectUrl}`,
                "--conf spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension",
                "--conf spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog",
                "--conf spark.jars=/usr/share/aws/delta/lib/delta-spark.jar,/usr/share/aws/delta/lib/delta-storage.jar",
                ...(this.#kafkaClient ? [`--conf spark.jars.packages=${KAFKA_CLIENTS_PACKAGE}`] : []),
              ].join(" "),
            },
          },
          ConfigurationOverrides: {
            MonitoringConfiguration: {
              CloudWatchLoggingConfiguration: { Enabled: true, LogGroupName: this.logGroup.logGroupName },
            },
          },
          ExecutionTimeoutMinutes: this.jobTimeout.toMinutes(),
        },
        // The job's own bound, and the state's (without one, a state waits as long as the execution).
        TimeoutSeconds: this.jobTimeout.toSeconds() + 300,
        ResultSelector: { "JobRunId.$": "$.JobRunId", "ApplicationId.$": "$.ApplicationId" },
        ResultPath: options.resultPath,
        Retry: [
          {
            ErrorEquals: ["EMRServerless.ThrottlingException", "EMRServerless.InternalServerException"],
            IntervalSeconds: 5,
            MaxAttempts: 4,
            BackoffRate: 2,
          },
        ],
      },
    });
    return state;
  }

  /** What the state machine's role needs to run `runBatchState` (start, watch and cancel job runs). */
  grantRunBatches(role: iam.IGrantable): void {
    const stack = Stack.of(this);
    const application = stack.formatArn({
      service: "emr-serverless",
      resource: "/applications",
      resourceName: this.application.attrApplicationId,
    });
    iam.Grant.addToPrincipal({
      grantee: role,
      actions: ["emr-serverless:StartJobRun", "emr-serverless:GetJobRun", "emr-serverless:CancelJobRun"],
      resourceArns: [application, `${application}/jobruns/*`],
    });
    this.jobRole.grantPassRole(role.grantPrincipal);
    // The .sync integration watches the job run through a rule of its own.
    iam.Grant.addToPrincipal({
      grantee: role,
      actions: ["events:PutTargets", "events:PutRule", "events:DescribeRule"],
      resourceArns: [
        stack.formatArn({
          service: "events",
          resource: "rule",
          resourceName: "StepFunctionsGetEventsForEMRServerlessJobRule",
        }),
      ],
    });
  }
}

/** The entry script, for the local runtime and the tests (the same file the asset uploads). */
export const SPARK_ENTRY_SCRIPT = path.resolve(ENTRY_SCRIPT);
