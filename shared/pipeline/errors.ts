import { CodedError } from "../errors/coded-error.ts";

/**
 * Errors of the pipeline module: one base class and a subclass per failure. Each carries a stable
 * `name`, the `cause` it wraps, structured `data`, and the API `error_code` it maps to (api.md:
 * every error answers `{"error_code", "message"}`).
 */
export class PipelineError extends CodedError {
  override readonly name: string = "PipelineError";
}

/** One problem in a definition: where it is (`datasets[1].flows[0].source.type`) and what is wrong. */
export interface DefinitionIssue {
  readonly path: string;
  readonly message: string;
  /** A code of its own for a failure users meet often (e.g. `STREAMING_AGGREGATION_NOT_SUPPORTED`). */
  readonly code?: string;
}

/** Codes of definition issues that have one (the rest are `INVALID_PARAMETER_VALUE`). */
export const DEFINITION_ISSUE_CODES = {
  /** A stateful operator that needs an event-time watermark on a flow that has none. */
  watermarkRequired: "WATERMARK_REQUIRED",
  /** An aggregation over a stream that Ebb cannot keep incrementally (no window, or not decomposable). */
  streamingAggregation: "STREAMING_AGGREGATION_NOT_SUPPORTED",
  /** A stream-stream join without a watermark on one of its streams. */
  joinWatermarkRequired: "STREAM_JOIN_WATERMARK_REQUIRED",
  /** A stream-stream join whose condition has no event-time range (its state would grow forever). */
  joinTimeBoundRequired: "STREAM_JOIN_TIME_BOUND_REQUIRED",
  /** A stream-stream join of a shape Ebb does not keep (right or full outer, not in the outer query, …). */
  streamJoin: "STREAM_JOIN_NOT_SUPPORTED",
  /** AUTO CDC flows into one target that disagree on its keys, SCD type or sequence. */
  autoCdcFlowsIncompatible: "AUTO_CDC_FLOWS_INCOMPATIBLE",
  /** Two expectations of one dataset with the same name. */
  expectationNameNotUnique: "EXPECTATION_NAME_NOT_UNIQUE",
  /** An expectation's condition that is not one SQL boolean expression over the dataset's columns. */
  expectationConditionInvalid: "EXPECTATION_CONDITION_INVALID",
} as const;

/**
 * A pipeline definition that cannot be accepted. It lists every problem found at once, so a data
 * engineer fixes them in one round instead of one per attempt.
 */
export class DefinitionError extends PipelineError {
  override readonly name = "DefinitionError";
  /** The issues' own code when they all share one, else `INVALID_PARAMETER_VALUE`. */
  override readonly errorCode: string;

  constructor(
    readonly issues: readonly DefinitionIssue[],
    options: { cause?: unknown } = {},
  ) {
    super(describeIssues(issues), {
      ...options,
      data: { issues: issues.slice(0, LISTED_ISSUES), issueCount: issues.length },
    });
    const codes = new Set(issues.map((issue) => issue.code));
    const [only] = codes;
    this.errorCode = codes.size === 1 && only !== undefined ? only : "INVALID_PARAMETER_VALUE";
  }
}

/** A selection (`selection`, `refresh_selection`, …) names datasets or flows the pipeline lacks. */
export class UnknownSelectionError extends PipelineError {
  override readonly name = "UnknownSelectionError";
  override readonly errorCode = "INVALID_PARAMETER_VALUE";

  constructor(
    /** The request's field that named them (`full_refresh_selection`, …): the user's own word. */
    readonly field: string,
    readonly unknownNames: readonly string[],
    readonly knownNames: readonly string[],
  ) {
    super(
      `${field} names ${unknownNames.map((n) => `"${n}"`).join(", ")}, which ${unknownNames.length === 1 ? "is" : "are"} not a dataset or flow of this pipeline; known: ${knownNames.join(", ") || "(none)"}`,
      { data: { field, unknownNames, knownNames } },
    );
  }
}

/** DuckDB's parser could not be used at all (not a problem with the user's SQL). */
export class SqlParserUnavailableError extends PipelineError {
  override readonly name = "SqlParserUnavailableError";
}

/**
 * Problems a message lists: enough to fix in one pass, and an answer that stays far below Lambda's
 * 6 MB response limit however broken the definition (the count says how many there are).
 */
const LISTED_ISSUES = 50;

function describeIssues(issues: readonly DefinitionIssue[]): string {
  const lines = issues
    .slice(0, LISTED_ISSUES)
    .map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message));
  if (issues.length > LISTED_ISSUES)
    lines.push(`… and ${issues.length - LISTED_ISSUES} more: fix these first, then send it again`);
  const head =
    issues.length === 1
      ? "invalid pipeline definition"
      : `invalid pipeline definition (${issues.length} problems)`;
  return `${head}:\n  ${lines.join("\n  ")}`;
}

/** A source path (or definition file) names a local folder outside the roots the local runtime may read. */
export class LocalPathNotAllowedError extends PipelineError {
  override readonly name = "LocalPathNotAllowedError";
  override readonly errorCode = "LOCAL_PATH_NOT_ALLOWED";
  override readonly httpStatus = 400;
  constructor(field: string, location: string, roots: readonly string[]) {
    super(
      `${field} ${JSON.stringify(location)} is outside the folders this local runtime may read (${roots.join(", ")}): land the files under one of them, or start it with --allow-local-path <folder>`,
      { data: { field, location, roots } },
    );
  }
}

/** A local path where only S3 can be read: Ebb on AWS. */
export class S3LocationRequiredError extends PipelineError {
  override readonly name = "S3LocationRequiredError";
  override readonly errorCode = "S3_LOCATION_REQUIRED";
  override readonly httpStatus = 400;
  constructor(field: string, location: string) {
    super(
      `${field} ${JSON.stringify(location)} is a local folder, but this Ebb runs on AWS and reads sources from S3 only: upload the files and use s3://<bucket>/<prefix>`,
      { data: { field, location } },
    );
  }
}

/** NUL, a newline or another control character in a path. */
export class PathControlCharacterError extends PipelineError {
  override readonly name = "PathControlCharacterError";
  override readonly errorCode = "PATH_CONTROL_CHARACTER";
  override readonly httpStatus = 400;
  constructor(field: string, location: string, index: number) {
    const code = location.charCodeAt(index).toString(16).toUpperCase().padStart(4, "0");
    super(
      `${field} has a control character (U+${code} at position ${index}): paths may not hold NUL, newlines or other control characters; remove it`,
      { data: { field, index } },
    );
  }
}
