import { Duration, RemovalPolicy } from "aws-cdk-lib";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as s3 from "aws-cdk-lib/aws-s3";
import { STATEMENTS_PREFIX } from "../../shared/store/bucket-layout.ts";

/**
 * Pure prop factories for Ebb's storage. Kept apart from the constructs so the invariants (what must be
 * true of every table and bucket) sit in one readable place.
 */

/** Defaults of `EbbStorageProps`: one home for each. */
export const STORAGE_DEFAULTS = {
  noncurrentVersionRetention: Duration.days(30),
  accessLogRetention: Duration.days(90),
} as const;

/**
 * One bucket for tables, operator state and SQL statements' answers: private, TLS-only, encrypted,
 * versioned, kept, its requests logged to `accessLogs`. Versioning is the backup of the Delta log:
 * Delta's own history lives in the same objects an overwrite, a delete or a vacuum by mistake would
 * take, so a replaced or deleted object's previous version is kept for `noncurrentVersionRetention`,
 * then S3 removes it (cost stays bounded). A statement's answer is read for 24 hours
 * (statement-answers.ts); the day after, S3 removes it.
 */
export function bucketProps(options: {
  readonly noncurrentVersionRetention: Duration;
  readonly accessLogs: s3.IBucket;
}): s3.BucketProps {
  return {
    lifecycleRules: [
      { id: "StatementAnswers", prefix: STATEMENTS_PREFIX, expiration: Duration.days(2) },
      {
        id: "NoncurrentVersions",
        noncurrentVersionExpiration: options.noncurrentVersionRetention,
        // Once the versions behind a delete marker are gone, the marker is nothing but a listing cost.
        expiredObjectDeleteMarker: true,
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      },
    ],
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    encryption: s3.BucketEncryption.S3_MANAGED,
    versioned: true,
    serverAccessLogsBucket: options.accessLogs,
    serverAccessLogsPrefix: ACCESS_LOG_PREFIXES.data,
    removalPolicy: RemovalPolicy.RETAIN,
  };
}

/** Where each source's access logs go in the access-log bucket. */
export const ACCESS_LOG_PREFIXES = {
  data: "s3/data/",
  webUiAssets: "s3/web-ui-assets/",
  webUiDistribution: "cloudfront/web-ui/",
} as const;

/**
 * The bucket that receives the access logs of the other buckets and of the web UI's distribution:
 * private, TLS-only, S3-managed encryption (server access logging cannot write with SSE-KMS), kept,
 * each log removed after `retention`. ACLs stay enabled (object writer) because CloudFront's
 * standard logging writes with an ACL.
 */
export function accessLogBucketProps(retention: Duration): s3.BucketProps {
  return {
    lifecycleRules: [{ id: "AccessLogs", expiration: retention }],
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    encryption: s3.BucketEncryption.S3_MANAGED,
    objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
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
