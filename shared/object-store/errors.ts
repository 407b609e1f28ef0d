import { CodedError } from "../errors/coded-error.ts";

/**
 * Errors raised at the storage boundary. SDK errors are translated to these here and nowhere else,
 * so the core never sees an AWS type. Expected races (a key that already exists, a stale ETag) are
 * results of the port's methods, not errors.
 */
export class StoreError extends CodedError {
  override readonly name: string = "StoreError";
}

/** The object asked for does not exist. */
export class ObjectNotFoundError extends StoreError {
  override readonly name = "ObjectNotFoundError";
  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(`object not found: ${key}`, options);
  }
}

/** The store could not be reached or refused the request for a reason other than a missing key. */
export class StoreUnavailableError extends StoreError {
  override readonly name: string = "StoreUnavailableError";
}

/** A key that is not allowed (empty, absolute, or escaping its prefix with `..`). */
export class InvalidKeyError extends StoreError {
  override readonly name = "InvalidKeyError";
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`invalid object key ${JSON.stringify(key)}: ${reason}`);
  }
}
