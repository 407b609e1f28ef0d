import { Construct } from "constructs";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as s3 from "aws-cdk-lib/aws-s3";
import type { Duration } from "aws-cdk-lib";
import { STORAGE_DEFAULTS, accessLogBucketProps, bucketProps, tableProps } from "./storage-defaults.ts";
import {
  CHECKPOINTS_TABLE,
  EVENT_LOG_TABLE,
  PIPELINES_TABLE,
  UPDATES_TABLE,
} from "../../shared/store/table-schemas.ts";

const S = dynamodb.AttributeType.STRING;
const N = dynamodb.AttributeType.NUMBER;

export interface EbbStorageProps {
  /**
   * How long a replaced or deleted object's previous version is kept in the data bucket: the window
   * in which a table, its Delta log or a flow's state can be restored from S3 itself.
   * @default 30 days
   */
  readonly noncurrentVersionRetention?: Duration;
  /** How long S3 and CloudFront access logs are kept. @default 90 days */
  readonly accessLogRetention?: Duration;
}

/**
 * Ebb's storage (architecture.md "Storage"): one bucket for Delta tables and operator state, and one
 * DynamoDB table per access pattern; and the bucket that receives the access logs.
 */
export class EbbStorage extends Construct {
  readonly bucket: s3.Bucket;
  /** Receives the S3 server access logs and CloudFront's standard logs (storage-defaults.ts). */
  readonly accessLogs: s3.Bucket;
  readonly pipelines: dynamodb.Table;
  readonly updates: dynamodb.Table;
  readonly checkpoints: dynamodb.Table;
  readonly eventLog: dynamodb.Table;

  constructor(scope: Construct, id: string, props: EbbStorageProps = {}) {
    super(scope, id);
    this.accessLogs = new s3.Bucket(
      this,
      "AccessLogs",
      accessLogBucketProps(props.accessLogRetention ?? STORAGE_DEFAULTS.accessLogRetention),
    );
    this.bucket = new s3.Bucket(
      this,
      "Data",
      bucketProps({
        noncurrentVersionRetention:
          props.noncurrentVersionRetention ?? STORAGE_DEFAULTS.noncurrentVersionRetention,
        accessLogs: this.accessLogs,
      }),
    );
    this.pipelines = new dynamodb.Table(
      this,
      "Pipelines",
      tableProps({ name: PIPELINES_TABLE.partitionKey, type: S }),
    );
    this.updates = new dynamodb.Table(
      this,
      "Updates",
      tableProps({ name: UPDATES_TABLE.partitionKey, type: S }, { name: UPDATES_TABLE.sortKey, type: S }),
    );
    this.checkpoints = new dynamodb.Table(
      this,
      "Checkpoints",
      tableProps(
        { name: CHECKPOINTS_TABLE.partitionKey, type: S },
        { name: CHECKPOINTS_TABLE.sortKey, type: N },
      ),
    );
    this.eventLog = new dynamodb.Table(
      this,
      "EventLog",
      tableProps(
        { name: EVENT_LOG_TABLE.partitionKey, type: S },
        { name: EVENT_LOG_TABLE.sortKey, type: S },
        EVENT_LOG_TABLE.ttlAttribute,
      ),
    );
    this.eventLog.addGlobalSecondaryIndex({
      indexName: EVENT_LOG_TABLE.byEventTypeIndex,
      partitionKey: { name: EVENT_LOG_TABLE.eventTypeKey, type: S },
      sortKey: { name: EVENT_LOG_TABLE.timestampKey, type: S },
    });
  }
}
