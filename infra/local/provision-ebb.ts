import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { CfnElement } from "aws-cdk-lib";
import type { IConstruct } from "constructs";
import { buildStack, type CfnTemplate } from "../aws/synthesize.ts";
import { createS3Client, type AwsEndpoints } from "../../shared/store/aws-clients.ts";
import { ProvisioningError } from "./errors.ts";
import { provisionTemplate } from "./provision-template.ts";

/** The physical names of Ebb's storage, by role: what the runtime and the tests address. */
export interface StorageNames {
  readonly bucket: string;
  readonly pipelinesTable: string;
  readonly updatesTable: string;
  readonly checkpointsTable: string;
  readonly eventLogTable: string;
}

/** The synthesized Ebb stack, with the logical id of each storage role. */
export interface SynthesizedEbb {
  readonly stackName: string;
  readonly template: CfnTemplate;
  readonly logicalIds: Readonly<Record<keyof StorageNames, string>>;
}

/** Synthesizes the same stack `cdk deploy` deploys (no network, no Docker; about 4 s, mostly loading the CDK). */
export function synthesizeEbb(): SynthesizedEbb {
  const { app, stack } = buildStack();
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

/**
 * Creates Ebb's bucket and tables from the synthesized stack in the stand-ins (or LocalStack) at
 * `endpoints`, and returns their names. Idempotent.
 */
export async function provisionEbb(
  endpoints: AwsEndpoints,
  ebb: SynthesizedEbb = synthesizeEbb(),
): Promise<StorageNames> {
  const s3 = createS3Client(endpoints);
  const dynamodb = new DynamoDBClient({
    ...(endpoints.region ? { region: endpoints.region } : {}),
    ...(endpoints.credentials ? { credentials: endpoints.credentials } : {}),
    ...(endpoints.dynamoDbEndpoint ? { endpoint: endpoints.dynamoDbEndpoint } : {}),
  });
  try {
    const provisioned = await provisionTemplate(ebb.template, { s3, dynamodb }, ebb.stackName);
    const name = (role: keyof StorageNames): string => {
      const id = ebb.logicalIds[role];
      const found = provisioned.buckets[id] ?? provisioned.tables[id];
      if (!found) throw new ProvisioningError(`the template has no resource ${id} for ${role}`);
      return found;
    };
    return {
      bucket: name("bucket"),
      pipelinesTable: name("pipelinesTable"),
      updatesTable: name("updatesTable"),
      checkpointsTable: name("checkpointsTable"),
      eventLogTable: name("eventLogTable"),
    };
  } finally {
    s3.destroy();
    dynamodb.destroy();
  }
}
