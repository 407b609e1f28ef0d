import { describe, expect, it } from "vitest";
import { Match, Template } from "aws-cdk-lib/assertions";
import { buildStack } from "../../../infra/aws/synthesize.ts";
import { EVENT_LOG_TABLE } from "../../../shared/store/table-schemas.ts";

// The invariants that matter, not a serialized template.
const template = Template.fromStack(buildStack().stack);

describe("storage stack", () => {
  it("has one data bucket: all public access blocked, S3-managed encryption, versioned, retained", () => {
    template.hasResource("AWS::S3::Bucket", {
      DeletionPolicy: "Retain",
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
        },
        VersioningConfiguration: { Status: "Enabled" },
      },
    });
  });

  it("keeps a replaced or deleted object's previous version for 30 days, then removes it and its delete marker", () => {
    template.hasResourceProperties("AWS::S3::Bucket", {
      VersioningConfiguration: { Status: "Enabled" },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({
            Id: "NoncurrentVersions",
            NoncurrentVersionExpiration: { NoncurrentDays: 30 },
            ExpiredObjectDeleteMarker: true,
            Status: "Enabled",
          }),
        ]),
      },
    });
  });

  it("aborts a multipart upload left incomplete for a day, so a task that died mid-upload leaves no parts behind", () => {
    // A batch's large output files go up in parts as DuckDB writes them (streamed-file-upload.ts); a
    // function that times out or crashes between parts and the completion leaves parts S3 bills for.
    template.hasResourceProperties("AWS::S3::Bucket", {
      VersioningConfiguration: { Status: "Enabled" },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: "Enabled" }),
        ]),
      },
    });
  });

  it("logs the data bucket's requests to a private access-log bucket that keeps them 90 days and logs nowhere itself", () => {
    template.resourceCountIs("AWS::S3::Bucket", 2);
    const buckets = template.findResources("AWS::S3::Bucket");
    const [logsId, logs] = Object.entries(buckets).find(([, b]) => !b["Properties"]["LoggingConfiguration"])!;
    expect(logs["DeletionPolicy"]).toBe("Retain");
    expect(logs["Properties"]).toMatchObject({
      LifecycleConfiguration: { Rules: [{ Id: "AccessLogs", ExpirationInDays: 90, Status: "Enabled" }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
      },
    });
    template.hasResourceProperties("AWS::S3::Bucket", {
      VersioningConfiguration: { Status: "Enabled" },
      LoggingConfiguration: { DestinationBucketName: { Ref: logsId }, LogFilePrefix: "s3/data/" },
    });
  });

  it("removes SQL statements' kept answers two days after they were written, and no other live object", () => {
    template.hasResourceProperties("AWS::S3::Bucket", {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          { Id: "StatementAnswers", Prefix: "statements/", ExpirationInDays: 2, Status: "Enabled" },
        ]),
      },
    });
    const data = Object.values(template.findResources("AWS::S3::Bucket")).find(
      (b) => b["Properties"]["VersioningConfiguration"],
    );
    const expiring = (
      data?.["Properties"]["LifecycleConfiguration"]["Rules"] as { Id: string; ExpirationInDays?: number }[]
    )
      .filter((rule) => rule.ExpirationInDays !== undefined)
      .map((rule) => rule.Id);
    expect(expiring).toEqual(["StatementAnswers"]);
  });

  it("denies every request to the bucket that is not over TLS", () => {
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: "Deny",
            Principal: { AWS: "*" },
            Action: "s3:*",
            Condition: { Bool: { "aws:SecureTransport": "false" } },
          }),
        ]),
      },
    });
  });

  it("makes every table on-demand, encrypted, point-in-time recoverable and retained", () => {
    const tables = template.findResources("AWS::DynamoDB::Table");
    expect(Object.keys(tables)).toHaveLength(4);
    for (const table of Object.values(tables)) {
      expect(table["DeletionPolicy"]).toBe("Retain");
      expect(table["Properties"]).toMatchObject({
        BillingMode: "PAY_PER_REQUEST",
        SSESpecification: { SSEEnabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    }
  });

  it("keys each table for its one access pattern", () => {
    const keySchemas = Object.values(template.findResources("AWS::DynamoDB::Table")).map(
      (t) => t["Properties"]["KeySchema"],
    );
    expect(keySchemas).toEqual(
      expect.arrayContaining([
        [{ AttributeName: "pipelineId", KeyType: "HASH" }],
        [
          { AttributeName: "pipelineId", KeyType: "HASH" },
          { AttributeName: "updateId", KeyType: "RANGE" },
        ],
        [
          { AttributeName: "flowKey", KeyType: "HASH" },
          { AttributeName: "seq", KeyType: "RANGE" },
        ],
        [
          { AttributeName: "pipelineId", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
      ]),
    );
  });

  it("gives the event log its by-event-type index and a TTL attribute", () => {
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      TimeToLiveSpecification: { AttributeName: EVENT_LOG_TABLE.ttlAttribute, Enabled: true },
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: EVENT_LOG_TABLE.byEventTypeIndex,
          KeySchema: [
            { AttributeName: EVENT_LOG_TABLE.eventTypeKey, KeyType: "HASH" },
            { AttributeName: EVENT_LOG_TABLE.timestampKey, KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        }),
      ],
    });
  });
});
