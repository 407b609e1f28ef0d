import { S3Client } from "@aws-sdk/client-s3";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { NodeHttpHandler } from "@smithy/node-http-handler";

/**
 * How long a call may wait, so an unreachable or stalled service (a paused stand-in, a network
 * partition) fails the call — and the API answers 503 TEMPORARILY_UNAVAILABLE — instead of hanging:
 * the SDKs wait forever by default. Three attempts of a DynamoDB call stay under API Gateway's 29 s.
 * S3's limit is for a socket with no bytes moving, so a large object still streams for as long as it
 * keeps moving.
 */
export const AWS_CALL_LIMITS = {
  connectMs: 3_000,
  attempts: 3,
  idleMs: { dynamoDb: 6_000, s3: 20_000, other: 8_000 },
} as const;

/** A client's attempts and HTTP handler within the limits above (any AWS SDK v3 client takes them). */
export function limitedCalls(idleMs: number): { maxAttempts: number; requestHandler: NodeHttpHandler } {
  return {
    maxAttempts: AWS_CALL_LIMITS.attempts,
    requestHandler: new NodeHttpHandler({
      connectionTimeout: AWS_CALL_LIMITS.connectMs,
      requestTimeout: idleMs,
      // Without it the handler only logs a warning and the call keeps waiting.
      throwOnRequestTimeout: true,
    }),
  };
}

/**
 * Where the AWS services are. On AWS every field is left out and the SDK's defaults apply; the
 * embedded local runtime, LocalStack and the tests set endpoints and static credentials.
 */
export interface AwsEndpoints {
  readonly region?: string;
  readonly s3Endpoint?: string;
  readonly dynamoDbEndpoint?: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/**
 * An S3 client. Against a stand-in (an endpoint is set) it uses path-style addressing and computes
 * checksums only when an operation requires them: s3rver and LocalStack do not validate the SDK's
 * default CRC32 trailers correctly.
 */
export function createS3Client(endpoints: AwsEndpoints = {}): S3Client {
  const local = endpoints.s3Endpoint !== undefined;
  return new S3Client({
    ...limitedCalls(AWS_CALL_LIMITS.idleMs.s3),
    ...(endpoints.region ? { region: endpoints.region } : {}),
    ...(endpoints.credentials ? { credentials: endpoints.credentials } : {}),
    ...(local
      ? {
          endpoint: endpoints.s3Endpoint,
          forcePathStyle: true,
          requestChecksumCalculation: "WHEN_REQUIRED",
          responseChecksumValidation: "WHEN_REQUIRED",
        }
      : {}),
  });
}

/** A DynamoDB document client (plain JS values in, plain JS values out; undefined fields dropped). */
export function createDocumentClient(endpoints: AwsEndpoints = {}): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    ...limitedCalls(AWS_CALL_LIMITS.idleMs.dynamoDb),
    ...(endpoints.region ? { region: endpoints.region } : {}),
    ...(endpoints.credentials ? { credentials: endpoints.credentials } : {}),
    ...(endpoints.dynamoDbEndpoint ? { endpoint: endpoints.dynamoDbEndpoint } : {}),
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

/** Reads endpoints from the environment (the same variables the AWS CLI and SDKs honour). */
export function endpointsFromEnv(env: NodeJS.ProcessEnv = process.env): AwsEndpoints {
  const s3 = env["AWS_ENDPOINT_URL_S3"] ?? env["AWS_ENDPOINT_URL"];
  const dynamo = env["AWS_ENDPOINT_URL_DYNAMODB"] ?? env["AWS_ENDPOINT_URL"];
  return {
    ...(env["AWS_REGION"] ? { region: env["AWS_REGION"] } : {}),
    ...(s3 ? { s3Endpoint: s3 } : {}),
    ...(dynamo ? { dynamoDbEndpoint: dynamo } : {}),
  };
}
