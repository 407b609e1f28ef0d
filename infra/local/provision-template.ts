import { setTimeout as sleep } from "node:timers/promises";
import { CreateBucketCommand, S3ServiceException, type S3Client } from "@aws-sdk/client-s3";
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  type TableDescription,
} from "@aws-sdk/client-dynamodb";
import type { CfnTemplate } from "../aws/synthesize.ts";
import { ProvisioningError } from "./errors.ts";
import { readTemplateResources, type TableSpec } from "./template-resources.ts";

/** How long a new table may stay CREATING (DynamoDB Local and LocalStack are immediate). */
const TABLE_ACTIVE_TIMEOUT_MS = 30_000;

export interface ProvisionClients {
  readonly s3: S3Client;
  readonly dynamodb: DynamoDBClient;
}

/** Physical names by logical id. */
export interface ProvisionedResources {
  readonly buckets: Readonly<Record<string, string>>;
  readonly tables: Readonly<Record<string, string>>;
}

/**
 * Creates the template's buckets and tables in the stand-ins (or LocalStack). Idempotent: what exists
 * is kept, provided it has the shape the template defines; a table with another key schema or other
 * indexes (left by an older stack in a kept data folder) is an error rather than a silent mismatch.
 */
export async function provisionTemplate(
  template: CfnTemplate,
  clients: ProvisionClients,
  stackName: string,
): Promise<ProvisionedResources> {
  const { buckets, tables } = readTemplateResources(template, stackName);
  await Promise.all([
    ...buckets.map((bucket) => createBucket(clients.s3, bucket.bucketName)),
    ...tables.map((table) => createTable(clients.dynamodb, table)),
  ]);
  return {
    buckets: Object.fromEntries(buckets.map((b) => [b.logicalId, b.bucketName])),
    tables: Object.fromEntries(tables.map((t) => [t.logicalId, t.input.TableName])),
  };
}

async function createBucket(s3: S3Client, name: string): Promise<void> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: name }));
  } catch (error) {
    const exists =
      error instanceof S3ServiceException &&
      (error.name === "BucketAlreadyOwnedByYou" || error.name === "BucketAlreadyExists");
    if (!exists) throw error;
  }
}

async function createTable(dynamodb: DynamoDBClient, table: TableSpec): Promise<void> {
  const name = table.input.TableName;
  try {
    await dynamodb.send(new CreateTableCommand(table.input));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    const existing = await describe(dynamodb, name);
    if (shapeOf(existing) !== shapeOf(table.input)) {
      throw new ProvisioningError(
        `table ${name} exists with another shape than ${table.logicalId} in the stack ` +
          `(has ${shapeOf(existing)}, the stack wants ${shapeOf(table.input)}); ` +
          "delete the table (or the local data folder) and provision again",
      );
    }
  }
  await waitUntilActive(dynamodb, name);
  if (table.ttlAttribute) await enableTtl(dynamodb, name, table.ttlAttribute);
}

async function enableTtl(dynamodb: DynamoDBClient, name: string, attribute: string): Promise<void> {
  const { TimeToLiveDescription: ttl } = await dynamodb.send(
    new DescribeTimeToLiveCommand({ TableName: name }),
  );
  if (ttl?.TimeToLiveStatus === "ENABLED" || ttl?.TimeToLiveStatus === "ENABLING") {
    if (ttl.AttributeName === attribute) return;
    throw new ProvisioningError(
      `table ${name} expires items by ${ttl.AttributeName}, the stack says ${attribute}; ` +
        "delete the table (or the local data folder) and provision again",
    );
  }
  await dynamodb.send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: { AttributeName: attribute, Enabled: true },
    }),
  );
}

async function describe(dynamodb: DynamoDBClient, name: string): Promise<TableDescription> {
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: name }));
  if (!Table) throw new ProvisioningError(`DescribeTable returned nothing for ${name}`);
  return Table;
}

async function waitUntilActive(dynamodb: DynamoDBClient, name: string): Promise<void> {
  const deadline = Date.now() + TABLE_ACTIVE_TIMEOUT_MS;
  while ((await describe(dynamodb, name)).TableStatus !== "ACTIVE") {
    if (Date.now() > deadline)
      throw new ProvisioningError(`table ${name} is not ACTIVE after ${TABLE_ACTIVE_TIMEOUT_MS} ms`);
    await sleep(100);
  }
}

/** What decides a table's shape, as a comparable string: key schema, key types, index keys. */
interface Shaped {
  KeySchema?: KeySchemaElement[] | undefined;
  AttributeDefinitions?:
    { AttributeName?: string | undefined; AttributeType?: string | undefined }[] | undefined;
  GlobalSecondaryIndexes?:
    { IndexName?: string | undefined; KeySchema?: KeySchemaElement[] | undefined }[] | undefined;
  LocalSecondaryIndexes?:
    { IndexName?: string | undefined; KeySchema?: KeySchemaElement[] | undefined }[] | undefined;
}

function shapeOf(table: Shaped): string {
  const keys = (schema: KeySchemaElement[] = []) =>
    schema.map((k) => `${k.AttributeName}:${k.KeyType}`).join(",");
  const indexes = (list: Shaped["GlobalSecondaryIndexes"] = []) =>
    list
      .map((i) => `${i.IndexName}(${keys(i.KeySchema)})`)
      .sort()
      .join(" ");
  const types = (table.AttributeDefinitions ?? [])
    .map((a) => `${a.AttributeName}:${a.AttributeType}`)
    .sort()
    .join(",");
  return `keys [${keys(table.KeySchema)}] types [${types}] gsi [${indexes(table.GlobalSecondaryIndexes)}] lsi [${indexes(table.LocalSecondaryIndexes)}]`;
}
