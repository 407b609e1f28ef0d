import { CodedError, httpStatusOf } from "../errors/coded-error.ts";
import { StoreUnavailableError } from "../object-store/errors.ts";

/**
 * Any error → the API's answer: an HTTP status and `{"error_code", "message"}` (api.md). Every
 * module's errors are a `CodedError`, whose code and status the API answers with. Anything else, and
 * a `CodedError` left at `INTERNAL_ERROR`, is a bug or an outage: 500 `INTERNAL_ERROR`, with a
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

export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof CodedError && error.errorCode !== "INTERNAL_ERROR") {
    return { status: httpStatusOf(error), body: { error_code: error.errorCode, message: error.message } };
  }
  if (error instanceof StoreUnavailableError) {
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
