import type { TestProject } from "vitest/node";
import { loadSynthesizedEbb } from "../infra/local/ebb-synthesis-cache.ts";
import { startEmbeddedEbb } from "../infra/local/embedded-ebb.ts";
import { provisionEbb } from "../infra/local/provision-ebb.ts";
import type { TestAws, TestBackend } from "./support/test-aws.ts";

/**
 * Once per run: starts the AWS stand-ins (or LocalStack, in Docker or on the host) with Ebb's storage provisioned from the
 * synthesized stack, and provides where they are to every test as `inject("aws")`.
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
    try {
      const storage = await provisionEbb(localstack.endpoints, await loadSynthesizedEbb());
      provide(project, { backend, endpoints: localstack.endpoints, storage });
    } catch (error) {
      await localstack.stop();
      throw error;
    }
    return localstack.stop;
  }
  const { aws, storage } = await startEmbeddedEbb({ dataDir: "memory" });
  provide(project, { backend, endpoints: aws.endpoints, storage });
  return aws.stop;
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
