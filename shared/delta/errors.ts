/**
 * Errors of the Delta module: one base class and a subclass per failure, each with a stable `name`,
 * the `cause` it wraps, and the data a caller needs to act on it. Expected races (a commit version
 * already taken) are results, not errors; these are for states a caller cannot retry away.
 */
export class DeltaError extends Error {
  override readonly name: string = "DeltaError";
  /** Structured details for logs and API responses. */
  readonly data: Readonly<Record<string, unknown>>;

  constructor(message: string, options: { cause?: unknown; data?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.data = options.data ?? {};
  }
}

/** No Delta table at the location: `_delta_log/` holds no commit and no checkpoint. */
export class TableNotFoundError extends DeltaError {
  override readonly name = "TableNotFoundError";
  constructor(
    readonly location: string,
    options: { cause?: unknown } = {},
  ) {
    super(`no Delta table at ${location || "(root)"}: _delta_log/ has no commit or checkpoint`, {
      ...options,
      data: { location },
    });
  }
}

/** The requested version is outside the history still readable from the log. */
export class VersionNotFoundError extends DeltaError {
  override readonly name = "VersionNotFoundError";
  constructor(
    readonly version: number,
    /** The oldest and latest versions that can be loaded, when the table has any. */
    readonly available: { readonly earliest: number; readonly latest: number } | undefined,
    options: { cause?: unknown } = {},
  ) {
    super(
      available
        ? `version ${version} is not in the table's history: versions ${available.earliest} to ${available.latest} can be read`
        : `version ${version} is not in the table's history: the table has no readable version`,
      { ...options, data: { version, ...(available ?? {}) } },
    );
  }
}

/** The requested timestamp is before the earliest readable commit (or otherwise out of range). */
export class TimestampOutOfRangeError extends DeltaError {
  override readonly name = "TimestampOutOfRangeError";
  constructor(
    readonly timestamp: number,
    readonly earliest: { readonly version: number; readonly timestamp: number } | undefined,
    options: { cause?: unknown } = {},
  ) {
    super(
      earliest
        ? `timestamp ${new Date(timestamp).toISOString()} is before the earliest readable commit (version ${earliest.version} at ${new Date(earliest.timestamp).toISOString()})`
        : `timestamp ${new Date(timestamp).toISOString()} is out of range: the table has no readable commit`,
      { ...options, data: { timestamp, ...(earliest ? { earliest } : {}) } },
    );
  }
}

/** The table needs a protocol feature this reader does not implement. */
export class UnsupportedFeatureError extends DeltaError {
  override readonly name = "UnsupportedFeatureError";
  constructor(
    readonly feature: string,
    detail?: string,
    options: { cause?: unknown } = {},
  ) {
    super(`unsupported Delta feature ${feature}${detail ? `: ${detail}` : ""}`, {
      ...options,
      data: { feature },
    });
  }
}

/** The log cannot be reconciled into a valid table state. */
export class CorruptLogError extends DeltaError {
  override readonly name: string = "CorruptLogError";
  constructor(message: string, options: { cause?: unknown; data?: Record<string, unknown> } = {}) {
    super(`corrupt Delta log: ${message}`, options);
  }
}

/** A file under `_delta_log/` that is not valid JSON (or not a known action), with where it failed. */
export class InvalidLogFileError extends CorruptLogError {
  override readonly name = "InvalidLogFileError";
  constructor(
    readonly file: string,
    readonly line: number,
    reason: string,
    options: { cause?: unknown } = {},
  ) {
    super(`${file} line ${line}: ${reason}`, { ...options, data: { file, line } });
  }
}

/** A schemaString, or a value serialized for it, that this reader cannot interpret. */
export class SchemaError extends DeltaError {
  override readonly name = "SchemaError";
}
