import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createS3Client, type AwsEndpoints } from "../../shared/store/aws-clients.ts";
import type { StorageRole, SynthesizedEbb } from "./ebb-synthesis.ts";
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

/**
 * Creates Ebb's bucket and tables from the synthesized stack (see `loadSynthesizedEbb`) in the
 * stand-ins (or LocalStack) at `endpoints`, and returns their names. Idempotent.
 */
export async function provisionEbb(endpoints: AwsEndpoints, ebb: SynthesizedEbb): Promise<StorageNames> {
  const s3 = createS3Client(endpoints);
  const dynamodb = new DynamoDBClient({
    ...(endpoints.region ? { region: endpoints.region } : {}),
    ...(endpoints.credentials ? { credentials: endpoints.credentials } : {}),
    ...(endpoints.dynamoDbEndpoint ? { endpoint: endpoints.dynamoDbEndpoint } : {}),
  });
  try {
    const provisioned = await provisionTemplate(ebb.template, { s3, dynamodb }, ebb.stackName);
    const name = (role: StorageRole): string => {
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
