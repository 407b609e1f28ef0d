import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { inject } from "vitest";
import { createDocumentClient, createS3Client } from "../../shared/store/aws-clients.ts";
import { S3ObjectStore } from "../../shared/object-store/s3-object-store.ts";
import type { TestAws } from "./test-aws.ts";

/**
 * Clients for the integration tests, built from what global-setup.ts provides. Test files run in
 * parallel against one bucket and one set of tables, so each test writes under its own
 * `uniquePrefix()` (or items keyed by one) and never assumes a bucket or table is empty.
 */

/** Endpoints, credentials and Ebb's bucket and table names for this run. */
export function testAws(): TestAws {
  const aws = inject("aws") as TestAws | undefined;
  if (!aws) {
    throw new Error(
      "this run started no AWS stand-ins (EBB_TEST_BACKEND=none); run integration tests without it",
    );
  }
  return aws;
}

/** A prefix no other test uses, e.g. `test/put-if-absent-3f9c…/`. */
export function uniquePrefix(label = "test"): string {
  return `test/${label}-${randomUUID()}/`;
}

let s3: S3Client | undefined;
let dynamodb: DynamoDBClient | undefined;
let documents: DynamoDBDocumentClient | undefined;

/** An S3 client for the run's S3 (path-style, checksums only when required). */
export function testS3Client(): S3Client {
  return (s3 ??= createS3Client(testAws().endpoints));
}

/** A low-level DynamoDB client for the run's DynamoDB. */
export function testDynamoDbClient(): DynamoDBClient {
  const { endpoints } = testAws();
  return (dynamodb ??= new DynamoDBClient({
    region: endpoints.region,
    credentials: endpoints.credentials,
    endpoint: endpoints.dynamoDbEndpoint,
  }));
}

/** A DynamoDB document client for the run's DynamoDB. */
export function testDocumentClient(): DynamoDBDocumentClient {
  return (documents ??= createDocumentClient(testAws().endpoints));
}

/** The object-store port on Ebb's bucket, rooted at `prefix` (a fresh unique one by default). */
export function testObjectStore(prefix: string = uniquePrefix()): S3ObjectStore {
  return new S3ObjectStore({ client: testS3Client(), bucket: testAws().storage.bucket, prefix });
}
