/**
 * The one error base of Ebb (api.md: every error answers `{"error_code", "message"}`): an error a
 * caller can act on carries the API `error_code`, the HTTP status, a message that says what
 * happened and what to do, the `cause` it wraps and structured `data`. Each module's `errors.ts`
 * extends it (a module base such as `DeltaError`, then one class per failure with a stable `name`,
 * which Step Functions Retry/Catch match on). `INTERNAL_ERROR`, the default, means an Ebb bug.
 */
export class CodedError extends Error {
  override readonly name: string = "CodedError";
  /** The `error_code` the HTTP API answers with. */
  readonly errorCode: string = "INTERNAL_ERROR";
  /** The HTTP status; where a class sets none, it follows from the code (`httpStatusOf`). */
  readonly httpStatus: number | undefined = undefined;
  /** Structured details for logs, events and API responses. */
  readonly data: Readonly<Record<string, unknown>>;

  constructor(message: string, options: CodedErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.data = options.data ?? {};
  }
}

export interface CodedErrorOptions {
  readonly cause?: unknown;
  readonly data?: Record<string, unknown>;
}

/** A request value that is not allowed: an unknown field, a wrong type, a rule between fields. */
export class InvalidParameterError extends CodedError {
  override readonly name: string = "InvalidParameterError";
  override readonly errorCode: string = "INVALID_PARAMETER_VALUE";
  override readonly httpStatus = 400;
}

/** Codes whose status is not 400 when the error does not set one. */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  RESOURCE_DOES_NOT_EXIST: 404,
  ENDPOINT_NOT_FOUND: 404,
  PIPELINE_BUSY: 409,
  PIPELINE_REWIND_INCOMPLETE: 409,
  RESOURCE_CONFLICT: 409,
  INVALID_STATE: 409,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  REQUEST_LIMIT_EXCEEDED: 413,
  INTERNAL_ERROR: 500,
  TEMPORARILY_UNAVAILABLE: 503,
};

/** The HTTP status `error` answers with: its own, else the one its code implies, else 400. */
export function httpStatusOf(error: CodedError): number {
  return error.httpStatus ?? STATUS_BY_CODE[error.errorCode] ?? 400;
}
