import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { EbbStorage } from "./ebb-storage.ts";

/** The Ebb stack. Deployed to AWS by `cdk deploy` and provisioned into the embedded stand-ins locally. */
export class EbbStack extends Stack {
  readonly storage: EbbStorage;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.storage = new EbbStorage(this, "Storage");
    new CfnOutput(this, "BucketName", { value: this.storage.bucket.bucketName });
  }
}
