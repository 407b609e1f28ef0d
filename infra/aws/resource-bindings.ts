import type * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import type * as events from "aws-cdk-lib/aws-events";
import * as iam from "aws-cdk-lib/aws-iam";
import type * as lambda from "aws-cdk-lib/aws-lambda";
import type * as s3 from "aws-cdk-lib/aws-s3";
import type * as sfn from "aws-cdk-lib/aws-stepfunctions";
import { ENVIRONMENT } from "../../functions/runtime/environment.ts";
import type { Access, BucketPrefix, FunctionAccess, TableRole } from "./function-access.ts";

/**
 * One call per resource sets a function's environment variable and its IAM grant together
 * (aws-solutions-constructs' `bindTable` idea), so a function never has a name it may not use, nor a
 * grant it cannot find.
 */

export function bindTable(
  fn: lambda.Function,
  role: TableRole,
  table: dynamodb.ITable,
  access: Access,
): void {
  fn.addEnvironment(ENVIRONMENT[role], table.tableName);
  if (access === "read") table.grantReadData(fn);
  else table.grantReadWriteData(fn);
}

/**
 * Grants are per prefix (`tables/*`, `state/*`), never the whole bucket, listing included: `ListBucket`
 * only under the prefix (the `s3:prefix` condition), where `grantRead` would allow every `List*`.
 */
export function bindBucket(
  fn: lambda.Function,
  bucket: s3.IBucket,
  prefix: BucketPrefix,
  access: Access,
): void {
  fn.addEnvironment(ENVIRONMENT.bucket, bucket.bucketName);
  grantPrefix(fn, bucket, prefix, access);
}

/** Read (and write and delete) of the objects under `prefix`, and listing only there. */
export function grantPrefix(fn: lambda.Function, bucket: s3.IBucket, prefix: string, access: Access): void {
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      actions: [
        "s3:GetObject",
        "s3:GetObjectVersion",
        ...(access === "readWrite" ? ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"] : []),
      ],
      resources: [bucket.arnForObjects(`${prefix}*`)],
    }),
  );
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ["s3:ListBucket"],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { "s3:prefix": [`${prefix}*`] } },
    }),
  );
}

export function bindStateMachine(
  fn: lambda.Function,
  stateMachine: sfn.StateMachine,
  actions: readonly ("start" | "stop")[],
): void {
  fn.addEnvironment(ENVIRONMENT.stateMachineArn, stateMachine.stateMachineArn);
  if (actions.includes("start")) {
    stateMachine.grantStartExecution(fn);
    // Whoever starts updates also frees a pipeline whose update's execution is gone (stale-update.ts).
    stateMachine.grantExecution(fn, "states:DescribeExecution");
  }
  if (actions.includes("stop")) stateMachine.grantExecution(fn, "states:StopExecution");
}

/** The bus's name, and `events:PutEvents` on that bus only (docs/events.md). */
export function bindEventBus(fn: lambda.Function, bus: events.IEventBus): void {
  fn.addEnvironment(ENVIRONMENT.eventBus, bus.eventBusName);
  bus.grantPutEventsTo(fn);
}

export interface BindableResources {
  readonly tables: Readonly<Record<TableRole, dynamodb.ITable>>;
  readonly bucket: s3.IBucket;
  readonly stateMachine?: sfn.StateMachine;
  readonly eventBus: events.IEventBus;
}

/** Everything `access` lists, bound. */
export function bindAccess(fn: lambda.Function, access: FunctionAccess, resources: BindableResources): void {
  for (const [role, level] of Object.entries(access.tables ?? {}) as [TableRole, Access][]) {
    bindTable(fn, role, resources.tables[role], level);
  }
  for (const [prefix, level] of Object.entries(access.bucket ?? {}) as [BucketPrefix, Access][]) {
    bindBucket(fn, resources.bucket, prefix, level);
  }
  if (access.stateMachine && access.stateMachine.length > 0) {
    if (!resources.stateMachine)
      throw new Error("bindAccess: this function needs the state machine, which is not built yet");
    bindStateMachine(fn, resources.stateMachine, access.stateMachine);
  }
  if (access.lifecycleEvents) bindEventBus(fn, resources.eventBus);
}
