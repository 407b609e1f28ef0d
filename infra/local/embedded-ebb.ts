import { startEmbeddedAws, type EmbeddedAws, type EmbeddedAwsOptions } from "./embedded-aws.ts";
import { provisionEbb, synthesizeEbb, type StorageNames } from "./provision-ebb.ts";

/** The embedded stand-ins with Ebb's storage in them. */
export interface EmbeddedEbb {
  readonly aws: EmbeddedAws;
  readonly storage: StorageNames;
}

/**
 * Starts the embedded stand-ins and provisions Ebb's bucket and tables from the synthesized stack:
 * what `npm start` and the test harness run. Stops the stand-ins again if provisioning fails.
 */
export async function startEmbeddedEbb(options: EmbeddedAwsOptions = {}): Promise<EmbeddedEbb> {
  // The stand-ins boot in their own processes while this one synthesizes the stack.
  const starting = startEmbeddedAws(options);
  let ebb: ReturnType<typeof synthesizeEbb>;
  try {
    ebb = synthesizeEbb();
  } catch (error) {
    await starting.then((aws) => aws.stop()).catch(() => undefined);
    throw error;
  }
  const aws = await starting;
  try {
    return { aws, storage: await provisionEbb(aws.endpoints, ebb) };
  } catch (error) {
    await aws.stop();
    throw error;
  }
}
