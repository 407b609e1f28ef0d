/**
 * Any error → the API's answer: an HTTP status and `{"error_code", "message"}` (api.md). Errors of
 * the domain modules carry an `errorCode` (and sometimes an `httpStatus`); the status follows from the
 * code where they do not say. Anything else is a bug or an outage: 500 `INTERNAL_ERROR`, with a
 * message that leaks no internals (the handler logs the error itself).
 */

export interface ErrorBody {
  readonly error_code: string;
  readonly message: string;
}

export interface ErrorResponse {
  readonly status: number;
  readonly body: ErrorBody;
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

interface CodedError {
  readonly errorCode: string;
  readonly httpStatus?: number;
  readonly message: string;
}

function isCoded(error: unknown): error is CodedError {
  return (
    error instanceof Error &&
    typeof (error as Partial<CodedError>).errorCode === "string" &&
    (error as unknown as CodedError).errorCode !== "INTERNAL_ERROR"
  );
}

export function toErrorResponse(error: unknown): ErrorResponse {
  if (isCoded(error)) {
    const status =
      typeof error.httpStatus === "number" ? error.httpStatus : (STATUS_BY_CODE[error.errorCode] ?? 400);
    return { status, body: { error_code: error.errorCode, message: error.message } };
  }
  if (error instanceof Error && error.name === "StoreUnavailableError") {
    return {
      status: 503,
      body: {
        error_code: "TEMPORARILY_UNAVAILABLE",
        message: "storage is unavailable right now: retry shortly",
      },
    };
  }
  return {
    status: 500,
    body: {
      error_code: "INTERNAL_ERROR",
      message: "an internal error occurred; it has been logged: retry, or report it",
    },
  };
}
