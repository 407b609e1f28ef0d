import { CodedError } from "../errors/coded-error.ts";

/**
 * Errors of the HTTP API layer itself (api.md: every error answers `{"error_code", "message"}`): a
 * body that is not JSON, too large, or names a field no route knows; a parameter that is not allowed;
 * a resource that is not there. A bad parameter is the shared `InvalidParameterError`
 * (`errors/coded-error.ts`); `error-response.ts` maps every `CodedError` to HTTP.
 */
export class ApiError extends CodedError {
  override readonly name: string = "ApiError";
  override readonly httpStatus: number = 500;
}

/** The body is not JSON (or not a JSON object). */
export class MalformedRequestError extends ApiError {
  override readonly name = "MalformedRequestError";
  override readonly errorCode = "MALFORMED_REQUEST";
  override readonly httpStatus = 400;
}

/** A body sent as something other than JSON (`Content-Type: text/plain`, a multipart form, XML). */
export class UnsupportedMediaTypeError extends ApiError {
  override readonly name = "UnsupportedMediaTypeError";
  override readonly errorCode = "UNSUPPORTED_MEDIA_TYPE";
  override readonly httpStatus = 415;
  constructor(readonly contentType: string) {
    super(`the body is sent as ${contentType}: send JSON, with Content-Type: application/json`);
  }
}

/** The body is larger than the API accepts. */
export class RequestTooLargeError extends ApiError {
  override readonly name = "RequestTooLargeError";
  override readonly errorCode = "REQUEST_LIMIT_EXCEEDED";
  override readonly httpStatus = 413;
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(
      `the request body is ${size} bytes; at most ${limit} bytes are accepted: send less (e.g. a smaller definition)`,
    );
  }
}

/** A pipeline, update, dataset or table that does not exist. */
export class ResourceNotFoundError extends ApiError {
  override readonly name = "ResourceNotFoundError";
  override readonly errorCode = "RESOURCE_DOES_NOT_EXIST";
  override readonly httpStatus = 404;
}

/** A table whose Delta log cannot be read (a log file changed or written outside Ebb), by its name. */
export class TableLogCorruptError extends ApiError {
  override readonly name = "TableLogCorruptError";
  override readonly errorCode = "DELTA_LOG_CORRUPT";
  override readonly httpStatus = 409;
}

/** The resource changed under the request (a concurrent edit); re-read and retry. */
export class ResourceConflictError extends ApiError {
  override readonly name = "ResourceConflictError";
  override readonly errorCode = "RESOURCE_CONFLICT";
  override readonly httpStatus = 409;
}

/** A resource with that name exists and the request asked for none to (`allow_duplicate_names: false`). */
export class ResourceAlreadyExistsError extends ApiError {
  override readonly name = "ResourceAlreadyExistsError";
  override readonly errorCode = "RESOURCE_ALREADY_EXISTS";
  override readonly httpStatus = 409;
}

/** The request would act on a resource whose state forbids it (e.g. delete while an update runs). */
export class InvalidStateError extends ApiError {
  override readonly name = "InvalidStateError";
  override readonly errorCode = "INVALID_STATE";
  override readonly httpStatus = 409;
}

/** No route answers this method and path. */
export class RouteNotFoundError extends ApiError {
  override readonly name = "RouteNotFoundError";
  override readonly errorCode = "ENDPOINT_NOT_FOUND";
  override readonly httpStatus = 404;
  constructor(method: string, path: string) {
    super(`no endpoint ${method} ${path}: see the routes in api.md (all under /api/2.0/)`);
  }
}

/** The caller did not prove who it is (local runtime: a missing or wrong bearer token). */
export class UnauthenticatedError extends ApiError {
  override readonly name = "UnauthenticatedError";
  override readonly errorCode = "UNAUTHENTICATED";
  override readonly httpStatus = 401;
}

/** An answer larger than the API carries in one response; the message names the way out. */
export class ResultTooLargeError extends ApiError {
  override readonly name = "ResultTooLargeError";
  override readonly errorCode = "RESULT_TOO_LARGE";
  override readonly httpStatus = 400;
}
