import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { Ebb, type EbbProps } from "./ebb.ts";
import type { EbbStorage } from "./ebb-storage.ts";

/** The Ebb stack. Deployed to AWS by `cdk deploy` and provisioned into the embedded stand-ins locally. */
export class EbbStack extends Stack {
  readonly ebb: Ebb;
  readonly storage: EbbStorage;

  constructor(scope: Construct, id: string, props?: StackProps & { readonly ebb?: EbbProps }) {
    super(scope, id, props);
    this.ebb = new Ebb(this, "Ebb", props?.ebb);
    this.storage = this.ebb.storage;
    new CfnOutput(this, "BucketName", { value: this.storage.bucket.bucketName });
    new CfnOutput(this, "ApiUrl", { value: this.ebb.api.url });
    new CfnOutput(this, "StateMachineArn", { value: this.ebb.stateMachine.stateMachineArn });
    if (this.ebb.webUi) {
      new CfnOutput(this, "WebUiUrl", {
        value: this.ebb.webUi.url,
      });
    }
  }
}
