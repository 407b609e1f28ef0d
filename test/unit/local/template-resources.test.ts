import { describe, expect, it } from "vitest";
import type { CfnTemplate } from "../../../infra/aws/synthesize.ts";
import { readTemplateResources } from "../../../infra/local/template-resources.ts";

const keys = {
  KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
  AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
};

describe("readTemplateResources", () => {
  it("names resources after the stack and logical id unless the template names them", () => {
    const template: CfnTemplate = {
      Resources: {
        DataBucket1A2B: { Type: "AWS::S3::Bucket" },
        Named: { Type: "AWS::S3::Bucket", Properties: { BucketName: "my-bucket" } },
        Jobs9F8E: { Type: "AWS::DynamoDB::Table", Properties: { ...keys, BillingMode: "PAY_PER_REQUEST" } },
        Policy: { Type: "AWS::S3::BucketPolicy", Properties: {} },
      },
    };
    const { buckets, tables } = readTemplateResources(template, "Ebb");
    expect(buckets).toEqual([
      { logicalId: "DataBucket1A2B", bucketName: "ebb-databucket1a2b" },
      { logicalId: "Named", bucketName: "my-bucket" },
    ]);
    expect(tables.map((t) => t.input.TableName)).toEqual(["Ebb-Jobs9F8E"]);
  });

  it("carries streams, local indexes and TTL, and drops what has no local meaning", () => {
    const template: CfnTemplate = {
      Resources: {
        Jobs: {
          Type: "AWS::DynamoDB::Table",
          Properties: {
            ...keys,
            BillingMode: "PAY_PER_REQUEST",
            StreamSpecification: { StreamViewType: "NEW_IMAGE" },
            LocalSecondaryIndexes: [
              { IndexName: "byId", KeySchema: keys.KeySchema, Projection: { ProjectionType: "KEYS_ONLY" } },
            ],
            TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
            SSESpecification: { SSEEnabled: true },
            PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          },
        },
      },
    };
    const [table] = readTemplateResources(template, "Ebb").tables;
    expect(table?.ttlAttribute).toBe("expiresAt");
    expect(table?.input).toEqual({
      TableName: "Ebb-Jobs",
      ...keys,
      BillingMode: "PAY_PER_REQUEST",
      StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_IMAGE" },
      LocalSecondaryIndexes: [
        { IndexName: "byId", KeySchema: keys.KeySchema, Projection: { ProjectionType: "KEYS_ONLY" } },
      ],
    });
  });

  it("defaults to CloudFormation's PROVISIONED billing, which needs a throughput", () => {
    const template: CfnTemplate = { Resources: { Jobs: { Type: "AWS::DynamoDB::Table", Properties: keys } } };
    expect(() => readTemplateResources(template, "Ebb")).toThrow(
      "Jobs: the table has BillingMode PROVISIONED but no ProvisionedThroughput",
    );
  });

  it("ignores a disabled TTL", () => {
    const template: CfnTemplate = {
      Resources: {
        Jobs: {
          Type: "AWS::DynamoDB::Table",
          Properties: {
            ...keys,
            BillingMode: "PAY_PER_REQUEST",
            TimeToLiveSpecification: { AttributeName: "x", Enabled: false },
          },
        },
      },
    };
    expect(readTemplateResources(template, "Ebb").tables[0]?.ttlAttribute).toBeUndefined();
  });
});
