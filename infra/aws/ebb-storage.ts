import { Construct } from "constructs";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as s3 from "aws-cdk-lib/aws-s3";
import { bucketProps, tableProps } from "./storage-defaults.ts";
import {
  CHECKPOINTS_TABLE,
  EVENT_LOG_TABLE,
  PIPELINES_TABLE,
  UPDATES_TABLE,
} from "../../shared/store/table-schemas.ts";

const S = dynamodb.AttributeType.STRING;
const N = dynamodb.AttributeType.NUMBER;

/**
 * Ebb's storage (architecture.md "Storage"): one bucket for Delta tables and operator state, and one
 * DynamoDB table per access pattern.
 */
export class EbbStorage extends Construct {
  readonly bucket: s3.Bucket;
  readonly pipelines: dynamodb.Table;
  readonly updates: dynamodb.Table;
  readonly checkpoints: dynamodb.Table;
  readonly eventLog: dynamodb.Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new s3.Bucket(this, "Data", bucketProps());
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
