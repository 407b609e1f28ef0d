import { LocalstackContainer } from "@testcontainers/localstack";
import { getContainerRuntimeClient } from "testcontainers";
import type { AwsEndpoints } from "../../shared/store/aws-clients.ts";

/** The last community image that runs without an auth token; override with EBB_LOCALSTACK_IMAGE. */
const DEFAULT_IMAGE = "localstack/localstack:4.4.0";

/**
 * LocalStack in a container, through testcontainers. Fails at once, saying so, when no Docker engine
 * can be reached: a run that asked for LocalStack must never quietly test something else.
 */
export async function startLocalStack(
  image = process.env["EBB_LOCALSTACK_IMAGE"] ?? DEFAULT_IMAGE,
): Promise<{ endpoints: Required<AwsEndpoints>; stop: () => Promise<void> }> {
  try {
    await getContainerRuntimeClient();
  } catch (error) {
    throw new Error(
      "EBB_TEST_BACKEND=localstack needs a Docker engine, and none was found " +
        `(${(error as Error).message}). Start Docker (or set DOCKER_HOST), or unset EBB_TEST_BACKEND ` +
        "to test against the embedded stand-ins.",
      { cause: error },
    );
  }
  const container = await new LocalstackContainer(image).withEnvironment({ SERVICES: "s3,dynamodb" }).start();
  const url = container.getConnectionUri();
  return {
    endpoints: {
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
      s3Endpoint: url,
      dynamoDbEndpoint: url,
    },
    stop: async () => {
      await container.stop();
    },
  };
}
