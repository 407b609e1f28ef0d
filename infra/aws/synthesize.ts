import { App } from "aws-cdk-lib";
import type { EbbProps } from "./ebb.ts";
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

export interface BuildOptions {
  /**
   * Bundle the functions with esbuild (what `cdk deploy` needs). Off, assets are placeholders: the
   * template is the same, and the local runtime and template tests run the handlers from source.
   * @default false
   */
  readonly bundle?: boolean;
  /** The web UI's built files, to deploy with the stack. @default no web UI */
  readonly webUiAssets?: string;
  /** The construct's other props (the tests: `sparkEngine`). @default none */
  readonly ebb?: EbbProps;
}

/** Builds the Ebb stack in a fresh app. No network, no Docker. */
export function buildStack(outdir?: string, options: BuildOptions = {}): { app: App; stack: EbbStack } {
  const app = new App({
    ...(outdir ? { outdir } : {}),
    // The CDK skips asset bundling for stacks not in this list (as `cdk list` does).
    ...(options.bundle ? {} : { context: { "aws:cdk:bundling-stacks": [] } }),
  });
  const stack = new EbbStack(app, STACK_NAME, {
    ebb: {
      ...options.ebb,
      ...(options.webUiAssets !== undefined ? { webUiAssets: options.webUiAssets } : {}),
    },
  });
  return { app, stack };
}

/** The synthesized template of the Ebb stack: what CloudFormation deploys and the local runtime provisions. */
export function synthesizeTemplate(): CfnTemplate {
  const { app, stack } = buildStack();
  return app.synth().getStackByName(stack.stackName).template as CfnTemplate;
}
