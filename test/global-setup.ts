import type { TestProject } from "vitest/node";
import type { AwsEndpoints } from "../shared/store/aws-clients.ts";
import { loadSynthesizedEbb } from "../infra/local/ebb-synthesis-cache.ts";
import { startEmbeddedEbb } from "../infra/local/embedded-ebb.ts";
import { provisionEbb } from "../infra/local/provision-ebb.ts";
import { assertBucketTablesConform } from "./support/protocol-check.ts";
import type { TestAws, TestBackend } from "./support/test-aws.ts";

/**
 * Once per run: starts the AWS stand-ins (or LocalStack, in Docker or on the host) with Ebb's storage provisioned from the
 * synthesized stack, and provides where they are to every test as `inject("aws")`. At the end,
 * before stopping them, checks every Delta table the run left in Ebb's bucket against PROTOCOL.md.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const backend = testBackend(process.env["EBB_TEST_BACKEND"]);
  // Unit tests alone need no AWS: `EBB_TEST_BACKEND=none npx vitest run test/unit` starts nothing.
  if (backend === "none") return undefined;
  if (backend === "localstack" || backend === "localstack-host") {
    // Loaded only when asked for: testcontainers takes a second to import.
    const localstack =
      backend === "localstack"
        ? await (await import("./support/localstack.ts")).startLocalStack()
        : await (await import("./support/localstack-host.ts")).startLocalStackHost();
    let storage;
    try {
      storage = await provisionEbb(localstack.endpoints, await loadSynthesizedEbb());
      provide(project, {
        backend,
        endpoints: localstack.endpoints,
        storage,
        ...("stepFunctionsEndpoint" in localstack
          ? { stepFunctionsEndpoint: localstack.stepFunctionsEndpoint }
          : {}),
      });
    } catch (error) {
      await localstack.stop();
      throw error;
    }
    return checkThenStop(localstack.endpoints, storage.bucket, localstack.stop);
  }
  const { aws, storage } = await startEmbeddedEbb({ dataDir: "memory" });
  provide(project, { backend, endpoints: aws.endpoints, storage });
  return checkThenStop(aws.endpoints, storage.bucket, aws.stop);
}

function checkThenStop(endpoints: AwsEndpoints, bucket: string, stop: () => Promise<void>) {
  return async () => {
    try {
      await assertBucketTablesConform(endpoints, bucket);
    } catch (error) {
      // vitest only logs a teardown's error; the run must fail on it.
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    } finally {
      await stop();
    }
  };
}

function testBackend(value: string | undefined): TestBackend | "none" {
  if (value === undefined || value === "" || value === "embedded") return "embedded";
  if (value === "localstack" || value === "localstack-host" || value === "none") return value;
  throw new Error(
    `EBB_TEST_BACKEND must be "embedded" (the default), "localstack", "localstack-host" or "none", not ${JSON.stringify(value)}`,
  );
}

function provide(project: TestProject, aws: TestAws): void {
  project.provide("aws", aws);
}
