import { App } from "aws-cdk-lib";
import { EbbStack } from "./ebb-stack.ts";

export const STACK_NAME = "Ebb";

/** A CloudFormation template as synthesized (resources by logical id). */
export interface CfnTemplate {
  readonly Resources: Record<
    string,
    { readonly Type: string; readonly Properties?: Record<string, unknown> }
  >;
  readonly Outputs?: Record<string, unknown>;
}

/** Builds the Ebb stack in a fresh app. No network, no Docker. */
export function buildStack(outdir?: string): { app: App; stack: EbbStack } {
  const app = new App({ ...(outdir ? { outdir } : {}) });
  const stack = new EbbStack(app, STACK_NAME);
  return { app, stack };
}

/** The synthesized template of the Ebb stack: what CloudFormation deploys and the local runtime provisions. */
export function synthesizeTemplate(): CfnTemplate {
  const { app, stack } = buildStack();
  return app.synth().getStackByName(stack.stackName).template as CfnTemplate;
}
