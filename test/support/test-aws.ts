import type { AwsEndpoints } from "../../shared/store/aws-clients.ts";
import type { StorageNames } from "../../infra/local/provision-ebb.ts";

/** Where the integration tests find AWS: provided once per run by global-setup.ts as `inject("aws")`. */
export interface TestAws {
  /**
   * `embedded` (default), `localstack` (in Docker, `EBB_TEST_BACKEND=localstack`) or `localstack-host`
   * (LocalStack's runtime on the host, `EBB_TEST_BACKEND=localstack-host`).
   */
  readonly backend: TestBackend;
  readonly endpoints: Required<AwsEndpoints>;
  /** Ebb's bucket and tables, provisioned from the synthesized stack. Shared by every test file. */
  readonly storage: StorageNames;
  /**
   * A Step Functions API that runs state machines (LocalStack's, on `localstack-host`): the test
   * control planes run the update state machine there, their tasks served in process as activities.
   * Absent: they run it in process (aws-local-stepfunctions), as `npm start` does.
   */
  readonly stepFunctionsEndpoint?: string;
}

export type TestBackend = "embedded" | "localstack" | "localstack-host";
