import { Fn } from "aws-cdk-lib";
import type * as ec2 from "aws-cdk-lib/aws-ec2";
import * as iam from "aws-cdk-lib/aws-iam";
import type * as kinesis from "aws-cdk-lib/aws-kinesis";
import type * as lambda from "aws-cdk-lib/aws-lambda";

/**
 * The event streams Ebb's pipelines may read, and how the functions that read them (the update
 * tasks, which run flows, and start-update, which checks a rewind against the stream's retention)
 * reach them: Kinesis streams by IAM grants; MSK clusters from inside their VPC, with IAM grants for
 * `AWS_MSK_IAM` sign-in. Functions that read no stream stay outside the VPC and get no grant.
 */

export interface EbbMskCluster {
  /** The cluster's ARN (`arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>`). */
  readonly clusterArn: string;
  /** The topics the pipelines read; names may end in `*`. @default every topic of the cluster */
  readonly topics?: readonly string[];
}

export interface EbbMskAccess {
  readonly clusters: readonly EbbMskCluster[];
  /** The VPC the brokers are in: the reading functions run in it. */
  readonly vpc: ec2.IVpc;
  /**
   * Where in the VPC. The functions also reach S3, DynamoDB and Step Functions from there, so these
   * subnets need a NAT gateway or VPC endpoints for them. @default the VPC's private subnets
   */
  readonly subnets?: ec2.SubnetSelection;
  /** Security groups the brokers admit (port 9098 for IAM, 9094/9096 for TLS/SCRAM). @default one new group, all outbound allowed */
  readonly securityGroups?: readonly ec2.ISecurityGroup[];
}

export interface EbbEventStreams {
  /** Kinesis streams the pipelines read (a stream from another stack: `Stream.fromStreamArn`). @default none */
  readonly kinesisStreams?: readonly kinesis.IStream[];
  /** MSK clusters the pipelines read. @default none */
  readonly msk?: EbbMskAccess;
}

/** The VPC settings of a function that reads the streams (none without MSK). */
export function streamReaderNetwork(
  streams: EbbEventStreams,
): Pick<lambda.FunctionOptions, "vpc" | "vpcSubnets" | "securityGroups"> {
  const msk = streams.msk;
  if (!msk) return {};
  return {
    vpc: msk.vpc,
    ...(msk.subnets ? { vpcSubnets: msk.subnets } : {}),
    ...(msk.securityGroups ? { securityGroups: [...msk.securityGroups] } : {}),
  };
}

/**
 * Read grants on every stream: Kinesis' read actions (and its key's decrypt), and on MSK the
 * connect, describe and read-data actions a reader without a consumer group needs.
 */
export function grantStreamReads(fn: lambda.Function, streams: EbbEventStreams): void {
  for (const stream of streams.kinesisStreams ?? []) stream.grantRead(fn);
  const clusters = streams.msk?.clusters ?? [];
  if (clusters.length === 0) return;
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"],
      resources: clusters.map((c) => c.clusterArn),
    }),
  );
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"],
      resources: clusters.flatMap((c) => (c.topics ?? ["*"]).map((topic) => topicArn(c.clusterArn, topic))),
    }),
  );
}

/** `…:cluster/<name>/<uuid>` → `…:topic/<name>/<uuid>/<topic>` (MSK's IAM resource for a topic). */
function topicArn(clusterArn: string, topic: string): string {
  const parts = Fn.split(":cluster/", clusterArn, 2);
  return Fn.join("", [Fn.select(0, parts), ":topic/", Fn.select(1, parts), "/", topic]);
}
