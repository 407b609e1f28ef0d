import { startEmbeddedAws, type EmbeddedAws, type EmbeddedAwsOptions } from "./embedded-aws.ts";
import { loadSynthesizedEbb } from "./ebb-synthesis-cache.ts";
import { provisionEbb, type StorageNames } from "./provision-ebb.ts";

/** The embedded stand-ins with Ebb's storage in them. */
export interface EmbeddedEbb {
  readonly aws: EmbeddedAws;
  readonly storage: StorageNames;
}

/**
 * Starts the embedded stand-ins and provisions Ebb's bucket and tables from the synthesized stack:
 * what `npm start` and the test harness run. Stops the stand-ins again if anything fails.
 */
export async function startEmbeddedEbb(options: EmbeddedAwsOptions = {}): Promise<EmbeddedEbb> {
  // The stand-ins boot in their own processes while this one synthesizes the stack (when not cached).
  const [aws, ebb] = await Promise.allSettled([startEmbeddedAws(options), loadSynthesizedEbb()]);
  if (aws.status === "rejected") throw aws.reason;
  try {
    if (ebb.status === "rejected") throw ebb.reason;
    return { aws: aws.value, storage: await provisionEbb(aws.value.endpoints, ebb.value) };
  } catch (error) {
    await aws.value.stop();
    throw error;
  }
}
