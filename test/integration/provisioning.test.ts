import { randomUUID } from "node:crypto";
import { DescribeTableCommand, DescribeTimeToLiveCommand, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { HeadBucketCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { CHECKPOINTS_TABLE, EVENT_LOG_TABLE } from "../../shared/store/table-schemas.ts";
import type { CfnTemplate } from "../../infra/aws/synthesize.ts";
import { ProvisioningError } from "../../infra/local/errors.ts";
import { provisionTemplate } from "../../infra/local/provision-template.ts";
import { testAws, testDynamoDbClient, testS3Client } from "../support/aws.ts";

describe("provisioning from the synthesized stack (done by the global setup)", () => {
  it("created the bucket and every table", async () => {
    const { storage } = testAws();
    await testS3Client().send(new HeadBucketCommand({ Bucket: storage.bucket }));
    const tables: string[] = [];
    let start: string | undefined;
    do {
      const page = await testDynamoDbClient().send(new ListTablesCommand({ ExclusiveStartTableName: start }));
      tables.push(...(page.TableNames ?? []));
      start = page.LastEvaluatedTableName;
    } while (start);
    expect(tables).toEqual(
      expect.arrayContaining([
        storage.pipelinesTable,
        storage.updatesTable,
        storage.checkpointsTable,
        storage.eventLogTable,
      ]),
    );
  });

  it("gave the event log its GSI and TTL, and the checkpoints a numeric sort key", async () => {
    const db = testDynamoDbClient();
    const { storage } = testAws();
    const { Table: eventLog } = await db.send(new DescribeTableCommand({ TableName: storage.eventLogTable }));
    expect(eventLog?.BillingModeSummary?.BillingMode).toBe("PAY_PER_REQUEST");
    expect(
      eventLog?.GlobalSecondaryIndexes?.map((i) => [i.IndexName, i.KeySchema, i.Projection?.ProjectionType]),
    ).toEqual([
      [
        EVENT_LOG_TABLE.byEventTypeIndex,
        [
          { AttributeName: EVENT_LOG_TABLE.eventTypeKey, KeyType: "HASH" },
          { AttributeName: EVENT_LOG_TABLE.timestampKey, KeyType: "RANGE" },
        ],
        "ALL",
      ],
    ]);
    const { TimeToLiveDescription: ttl } = await db.send(
      new DescribeTimeToLiveCommand({ TableName: storage.eventLogTable }),
    );
    expect(ttl).toEqual({ TimeToLiveStatus: "ENABLED", AttributeName: EVENT_LOG_TABLE.ttlAttribute });

    const { Table: checkpoints } = await db.send(
      new DescribeTableCommand({ TableName: storage.checkpointsTable }),
    );
    expect(checkpoints?.KeySchema).toEqual([
      { AttributeName: CHECKPOINTS_TABLE.partitionKey, KeyType: "HASH" },
      { AttributeName: CHECKPOINTS_TABLE.sortKey, KeyType: "RANGE" },
    ]);
    expect(checkpoints?.AttributeDefinitions).toContainEqual({
      AttributeName: CHECKPOINTS_TABLE.sortKey,
      AttributeType: "N",
    });
  });
});

describe("provisionTemplate", () => {
  /** A table keyed by `keys` (first HASH, second RANGE), with more attribute types and properties as given. */
  const table = (keys: Record<string, "S" | "N">, more: Record<string, unknown> = {}, indexKeys = {}) => ({
    Type: "AWS::DynamoDB::Table",
    Properties: {
      KeySchema: Object.keys(keys).map((name, i) => ({
        AttributeName: name,
        KeyType: i === 0 ? "HASH" : "RANGE",
      })),
      AttributeDefinitions: Object.entries({ ...keys, ...indexKeys }).map(([name, type]) => ({
        AttributeName: name,
        AttributeType: type,
      })),
      BillingMode: "PAY_PER_REQUEST",
      ...more,
    },
  });
  const clients = () => ({ s3: testS3Client(), dynamodb: testDynamoDbClient() });

  it("creates provisioned-capacity tables with a GSI and TTL, and is idempotent", async () => {
    const stack = `T${randomUUID().slice(0, 8)}`;
    const throughput = { ReadCapacityUnits: 1, WriteCapacityUnits: 1 };
    const template: CfnTemplate = {
      Resources: {
        Jobs: table(
          { jobId: "S", at: "N" },
          {
            BillingMode: "PROVISIONED",
            ProvisionedThroughput: throughput,
            GlobalSecondaryIndexes: [
              {
                IndexName: "byOwner",
                KeySchema: [{ AttributeName: "owner", KeyType: "HASH" }],
                Projection: { ProjectionType: "KEYS_ONLY" },
                ProvisionedThroughput: throughput,
              },
            ],
            TimeToLiveSpecification: { AttributeName: "ttl", Enabled: true },
          },
          { owner: "S" },
        ),
        Files: { Type: "AWS::S3::Bucket" },
      },
    };

    const first = await provisionTemplate(template, clients(), stack);
    expect(first).toEqual({
      buckets: { Files: `${stack}-files`.toLowerCase() },
      tables: { Jobs: `${stack}-Jobs` },
    });
    expect(await provisionTemplate(template, clients(), stack)).toEqual(first);

    const db = testDynamoDbClient();
    const { Table } = await db.send(new DescribeTableCommand({ TableName: `${stack}-Jobs` }));
    expect(Table?.ProvisionedThroughput).toMatchObject(throughput);
    expect(Table?.GlobalSecondaryIndexes?.[0]?.IndexName).toBe("byOwner");
    const { TimeToLiveDescription } = await db.send(
      new DescribeTimeToLiveCommand({ TableName: `${stack}-Jobs` }),
    );
    expect(TimeToLiveDescription?.AttributeName).toBe("ttl");
  });

  it("refuses to keep a table whose key schema differs from the template's", async () => {
    const stack = `T${randomUUID().slice(0, 8)}`;
    await provisionTemplate({ Resources: { Jobs: table({ jobId: "S" }) } }, clients(), stack);
    const changed = provisionTemplate(
      { Resources: { Jobs: table({ jobId: "S", at: "N" }) } },
      clients(),
      stack,
    );
    await expect(changed).rejects.toThrow(ProvisioningError);
    await expect(changed).rejects.toThrow(/exists with another shape/);
  });

  it("refuses a template whose table name is not a literal", async () => {
    const template = { Resources: { Jobs: table({ jobId: "S" }, { TableName: { Ref: "Name" } }) } };
    await expect(provisionTemplate(template, clients(), "T")).rejects.toThrow(
      /Jobs \(AWS::DynamoDB::Table\) cannot be created locally: TableName/,
    );
  });
});
