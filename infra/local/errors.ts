/**
 * Errors of the embedded local runtime. Each says what went wrong and what to do about it.
 */
export class EmbeddedAwsError extends Error {
  override readonly name: string = "EmbeddedAwsError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No Java runtime, or one older than DynamoDB Local needs. */
export class JavaNotFoundError extends EmbeddedAwsError {
  override readonly name = "JavaNotFoundError";
}

/** A stand-in process did not come up (or died while starting). */
export class StandInStartError extends EmbeddedAwsError {
  override readonly name = "StandInStartError";
}

/** The synthesized template holds something the local provisioning cannot create faithfully. */
export class ProvisioningError extends EmbeddedAwsError {
  override readonly name = "ProvisioningError";
}
