import { Duration, RemovalPolicy } from "aws-cdk-lib";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as s3 from "aws-cdk-lib/aws-s3";
import { STATEMENTS_PREFIX } from "../../shared/store/bucket-layout.ts";

/**
 * Pure prop factories for Ebb's storage. Kept apart from the constructs so the invariants (what must be
 * true of every table and bucket) sit in one readable place.
 */

/**
 * One bucket for tables, operator state and SQL statements' answers: private, TLS-only, encrypted,
 * unversioned, kept. A statement's answer is read for 24 hours (statement-answers.ts); the day after,
 * S3 removes it.
 */
export function bucketProps(): s3.BucketProps {
  return {
    lifecycleRules: [{ id: "StatementAnswers", prefix: STATEMENTS_PREFIX, expiration: Duration.days(2) }],
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    encryption: s3.BucketEncryption.S3_MANAGED,
    // Delta keeps its own versions in the log; S3 versioning would only pile up dead copies.
    versioned: false,
    removalPolicy: RemovalPolicy.RETAIN,
  };
}

/** Every DynamoDB table: on-demand, point-in-time recovery, encrypted, kept on stack deletion. */
export function tableProps(
  partitionKey: dynamodb.Attribute,
  sortKey?: dynamodb.Attribute,
  timeToLiveAttribute?: string,
): dynamodb.TableProps {
  return {
    partitionKey,
    ...(sortKey ? { sortKey } : {}),
    ...(timeToLiveAttribute ? { timeToLiveAttribute } : {}),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    removalPolicy: RemovalPolicy.RETAIN,
  };
}
