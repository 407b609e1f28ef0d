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

/**
 * The S3 bucket a location names does not exist (or these credentials cannot see it): a source's
 * `s3://` path with a mistyped bucket, or one made on another account or runtime. Names the bucket
 * and the way out rather than a missing object.
 */
export class BucketNotFoundError extends StoreError {
  override readonly name = "BucketNotFoundError";
  override readonly errorCode = "RESOURCE_DOES_NOT_EXIST";
  constructor(
    readonly bucket: string,
    key: string,
    options?: { cause?: unknown },
  ) {
    super(
      `the S3 bucket ${bucket} does not exist (reading s3://${bucket}/${key}): check the bucket in the path, or create it (locally: aws s3 mb s3://${bucket} with the exports npm start prints)`,
      options,
    );
  }
}

/** The store could not be reached or refused the request for a reason other than a missing key. */
export class StoreUnavailableError extends StoreError {
  override readonly name: string = "StoreUnavailableError";
}

/** The S3 error code (with status 503) of the local runtime's embedded S3 when its data folder is full. */
export const DATA_FOLDER_FULL_S3_CODE = "DataFolderFull";

/**
 * The local runtime's data folder has no room for a write: its embedded S3 refused it, naming the
 * folder and its free space (the message is the stand-in's). Not retried: room seldom returns within
 * a task's retries, so the update fails at once, saying so, rather than waiting in silence.
 */
export class DataFolderFullError extends StoreError {
  override readonly name = "DataFolderFullError";
  override readonly errorCode = "DATA_FOLDER_FULL";
  override readonly httpStatus = 507;
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
