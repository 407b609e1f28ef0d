import type { TestAws } from "./support/test-aws.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** See test/support/test-aws.ts. */
    aws: TestAws;
  }
}
