import type { CfnElement } from "aws-cdk-lib";
import type { IConstruct } from "constructs";
import type { EbbProps } from "../aws/ebb.ts";
import { buildStack, type CfnTemplate } from "../aws/synthesize.ts";

/** The roles of Ebb's storage resources. */
export type StorageRole = "bucket" | "pipelinesTable" | "updatesTable" | "checkpointsTable" | "eventLogTable";

/** The synthesized Ebb stack, with the logical id of each storage role. Plain JSON, so it can be cached. */
export interface SynthesizedEbb {
  readonly stackName: string;
  readonly template: CfnTemplate;
  readonly logicalIds: Readonly<Record<StorageRole, string>>;
}

/**
 * Synthesizes the same stack `cdk deploy` deploys (no network, no Docker). Takes seconds, mostly the
 * CDK's own loading and synthesis: use `loadSynthesizedEbb()`, which caches it.
 */
export function synthesizeEbb(props?: EbbProps): SynthesizedEbb {
  const { app, stack } = buildStack(undefined, props ? { ebb: props } : {});
  const { storage } = stack;
  const logicalId = (construct: IConstruct): string =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  return {
    stackName: stack.stackName,
    template: app.synth().getStackByName(stack.stackName).template as CfnTemplate,
    logicalIds: {
      bucket: logicalId(storage.bucket),
      pipelinesTable: logicalId(storage.pipelines),
      updatesTable: logicalId(storage.updates),
      checkpointsTable: logicalId(storage.checkpoints),
      eventLogTable: logicalId(storage.eventLog),
    },
  };
}
