import { S3Client } from "@aws-sdk/client-s3";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

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
