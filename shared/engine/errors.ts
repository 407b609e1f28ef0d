import { CodedError } from "../errors/coded-error.ts";
import { describeBytes } from "../pipeline/byte-size.ts";

/**
 * Errors of the pipeline engine: one base class and a subclass per failure. Each carries a stable
 * `name` (Step Functions Retry/Catch match on it), the `cause` it wraps, structured `data`, and the
 * API `error_code` it maps to. Messages say what happened and what to do.
 */
export class EngineError extends CodedError {
  override readonly name: string = "EngineError";
}

/**
 * A write of an update lost to a commit it conflicts with (Delta's `ConcurrentModificationException`:
 * an OPTIMIZE, RESTORE or schema change of the table by another writer landed first). Nothing of the
 * write was committed. The state machine retries the task, which redoes the write against the table
 * as it now is; this error is what the update fails with when the table kept changing.
 */
export class TableWriteConflictError extends EngineError {
  override readonly name = "TableWriteConflictError";
  override readonly errorCode = "RESOURCE_CONFLICT";
  constructor(
    readonly table: string,
    cause: Error,
  ) {
    super(
      `table ${table} changed while this update wrote to it (${cause.message.replace(/; re-read.*$/, "")}); ` +
        `nothing of the write was committed: start the update again once the other writer (an OPTIMIZE, RESTORE or ` +
        `another client) is done`,
      { cause, data: { table } },
    );
  }
}

/** User SQL tried something the sandbox does not allow (a file, a URL, ATTACH, INSTALL, a setting). */
export class SandboxViolationError extends EngineError {
  override readonly name = "SandboxViolationError";
  override readonly errorCode = "PERMISSION_DENIED";
  constructor(
    readonly refused: string,
    detail: string,
    options: { cause?: unknown } = {},
  ) {
    super(
      `the query was refused: ${refused} is not allowed in pipeline SQL (${detail}); a query reads only "source" and this pipeline's datasets`,
      { ...options, data: { refused } },
    );
  }
}

/** User SQL that is not one SELECT, does not parse, or fails while running. */
export class QueryError extends EngineError {
  override readonly name: string = "QueryError";
  override readonly errorCode: string = "INVALID_PARAMETER_VALUE";
}

/**
 * The SQL of a pipeline's flow or materialized view failed while an update ran it (an unknown column
 * or function the inputs' schemas at run time lack, a failed cast). The message keeps DuckDB's reason
 * with its candidates, as `QUERY_DOES_NOT_BIND` does, and names the query: the way out is to fix it.
 */
export class QueryFailedError extends QueryError {
  override readonly name = "QueryFailedError";
  override readonly errorCode = "QUERY_FAILED";
  constructor(
    /** What ran the SQL (`flow "ingest"`, `materialized view "totals"`). */
    readonly query: string,
    cause: Error,
  ) {
    super(
      `the SQL of ${query} failed: ${duckDbReason(cause)}; fix the query (validate_only binds every query ` +
        `over its inputs' schemas before a run) and run the update again`,
      { cause, data: { query } },
    );
  }
}

/** DuckDB's message up to its pointer into the SQL, on one line: its candidates are the way out. */
function duckDbReason(cause: Error): string {
  return cause.message
    .split(/\n\s*LINE \d+:/)[0]!
    .replace(/\s*\n\s*/g, " ")
    .trim();
}

/**
 * A query that DuckDB cannot bind over its inputs' schemas (an unknown column or function, a type
 * that does not fit), found by `validate_only` before any run (query-binding.ts). The message keeps
 * DuckDB's own text up to its pointer into the SQL: its candidates are the way out.
 */
export class QueryDoesNotBindError extends EngineError {
  override readonly name = "QueryDoesNotBindError";
  override readonly errorCode = "QUERY_DOES_NOT_BIND";
  constructor(
    /** The dataset, or `dataset.flow`. */
    readonly query: string,
    what: string,
    cause: Error,
  ) {
    super(
      `the SQL of ${what} (${query}) does not bind over its inputs' schemas: ${duckDbReason(cause)}; fix the query and validate again`,
      {
        cause,
        data: { query },
      },
    );
  }
}

/**
 * An upstream table was rewound (a RESTORE to version `restoredVersion`) past what this reader has
 * consumed, and the reader was not rewound with it (semantics.md "Doing the rewind").
 */
export class UpstreamRewoundError extends EngineError {
  override readonly name = "UpstreamRewoundError";
  override readonly errorCode = "UPSTREAM_REWOUND";
  constructor(
    readonly flow: string,
    readonly upstream: string,
    readonly restoredVersion: number,
    readonly restoreVersion: number,
    readonly consumedVersion: number,
  ) {
    super(
      `flow "${flow}" cannot continue: its upstream ${upstream} was rewound (version ${restoreVersion} restored version ${restoredVersion}) while this flow had already read up to version ${consumedVersion}; rewind this flow's dataset too (cascade), or fully refresh it`,
      { data: { flow, upstream, restoredVersion, restoreVersion, consumedVersion } },
    );
  }
}

/** An upstream dataset was fully refreshed (DROP: recreated, or TRUNCATE) and this reader was not. */
export class UpstreamRefreshedError extends EngineError {
  override readonly name = "UpstreamRefreshedError";
  override readonly errorCode = "UPSTREAM_FULLY_REFRESHED";
  constructor(
    readonly flow: string,
    readonly upstream: string,
    how: string,
  ) {
    super(
      `flow "${flow}" cannot continue: its upstream ${upstream} was fully refreshed (${how}) and this flow was not; fully refresh this flow's dataset too (with the upstream in the same update, or on its own afterwards: {"refresh": "FULL", "selection": ["<this flow's dataset>"]})`,
      { data: { flow, upstream, how } },
    );
  }
}

/** An upstream commit removed data in a way a streaming reader cannot follow (DELETE, overwrite, …). */
export class UpstreamChangedError extends EngineError {
  override readonly name = "UpstreamChangedError";
  override readonly errorCode = "UPSTREAM_DATA_REMOVED";
  constructor(
    readonly flow: string,
    readonly upstream: string,
    readonly version: number,
    readonly operation: string,
  ) {
    super(
      `flow "${flow}" cannot continue: version ${version} of its upstream ${upstream} is a ${operation} that removed data, which a stream cannot follow; fully refresh this flow's dataset`,
      { data: { flow, upstream, version, operation } },
    );
  }
}

/** Source records that could not be read, with where they are (the batch fails in `bad_records: fail`). */
export class MalformedRecordsError extends EngineError {
  override readonly name = "MalformedRecordsError";
  /** Databricks' error class for a record that does not parse. */
  override readonly errorCode = "MALFORMED_RECORD_IN_PARSING";
  constructor(
    readonly flow: string,
    /** The first few, in file and line order. */
    readonly records: readonly { readonly file: string; readonly line: number; readonly error: string }[],
    readonly count: number = records.length,
  ) {
    const first = records[0];
    // Line 0: the whole file is the record (a file that cannot be read at all).
    const where = first ? `${first.file}${first.line > 0 ? ` line ${first.line}` : ""}: ${first.error}` : "";
    super(
      `flow "${flow}" read ${count} malformed record${count === 1 ? "" : "s"} (first: ${where}); fix the records in their files and run again (the batch is planned with these files: a file removed instead fails it with SOURCE_FILE_GONE), or set the flow option bad_records: quarantine to divert them to the dataset's _quarantine table`,
      { data: { flow, count, records } },
    );
  }
}

/** A source the flow reads from is missing or unreadable. */
export class SourceUnavailableError extends EngineError {
  override readonly name = "SourceUnavailableError";
  override readonly errorCode = "RESOURCE_DOES_NOT_EXIST";
}

/**
 * A file an `auto_loader` batch was planned with is no longer under its location (removed after the
 * plan, before the batch ran or while it was retried): the batch cannot run as planned. Putting the
 * file back lets it run; a reset plans anew from the files there are.
 */
export class PlannedFileGoneError extends EngineError {
  override readonly name = "PlannedFileGoneError";
  override readonly errorCode = "SOURCE_FILE_GONE";
  constructor(
    readonly flow: string,
    readonly dataset: string,
    readonly key: string,
    readonly location: string,
    options: { cause?: unknown } = {},
  ) {
    super(
      `flow "${flow}" planned its next batch with the file ${key} under ${location}, which is gone. Put the file back and run again; or plan anew from the files there are: {"full_refresh_selection": ["${dataset}"]} rebuilds ${dataset} from every file there, {"reset_checkpoint_selection": ["${flow}"]} keeps its rows and reads every file again (rows already in it from those files land twice)`,
      { ...options, data: { flow, dataset, key, location } },
    );
  }
}

/** The flow's stored checkpoint state is inconsistent (a referenced state file is gone, …). */
export class CheckpointStateError extends EngineError {
  override readonly name = "CheckpointStateError";
}

/** A test hook stopped the micro-batch at a protocol step (crash injection). */
export class InjectedCrashError extends EngineError {
  override readonly name = "InjectedCrashError";
  constructor(readonly step: string) {
    super(`crash injected ${step}`, { data: { step } });
  }
}

/** The update was stopped on request before it finished. */
export class UpdateCanceledError extends EngineError {
  override readonly name = "UpdateCanceledError";
  override readonly errorCode = "CANCELED";
}

/**
 * A write refused by the fence: the update that tried it is no longer the pipeline's active update
 * (stopped, timed out, or superseded by a start after its execution was lost), so nothing it does
 * may land; the pipeline's current update continues from what was committed.
 */
export function fencedOut(
  updateId: string,
  refused: string,
  fenced: { readonly activeUpdateId?: string },
): UpdateCanceledError {
  const now = fenced.activeUpdateId ? `update ${fenced.activeUpdateId} is` : "no update is";
  return new UpdateCanceledError(
    `update ${updateId} is no longer the pipeline's active update (${now}): ${refused} was refused`,
    { data: { updateId, ...(fenced.activeUpdateId ? { activeUpdateId: fenced.activeUpdateId } : {}) } },
  );
}

/** Which of a statement's limits it went over (see `sql-limits.ts`). */
export type SqlLimitKind = "time" | "memory" | "temp";

const LIMIT_CODES: Readonly<Record<SqlLimitKind, string>> = {
  time: "SQL_TIME_LIMIT_EXCEEDED",
  memory: "SQL_MEMORY_LIMIT_EXCEEDED",
  temp: "SQL_TEMP_SPACE_LIMIT_EXCEEDED",
};

/** A user statement ran over its time, memory or spill-space limit and was stopped. */
export class SqlLimitExceededError extends EngineError {
  override readonly name = "SqlLimitExceededError";
  override readonly errorCode: string;

  constructor(
    readonly limit: SqlLimitKind,
    what: string,
    detail: string,
    options: { cause?: unknown } = {},
  ) {
    super(`the SQL of ${what} was stopped: ${detail}`, { ...options, data: { limit } });
    this.errorCode = LIMIT_CODES[limit];
  }
}

/**
 * The temporary folder's disk filled while a unit of work ran (ENOSPC, DuckDB's "No space left on
 * device", or a spill refused below its own limit because the disk could not hold it): the batch
 * needs more room than the function's ephemeral storage has: a batch too large for its function.
 */
export class TempSpaceExhaustedError extends EngineError {
  override readonly name = "TempSpaceExhaustedError";
  override readonly errorCode = "TEMP_SPACE_EXHAUSTED";
  constructor(
    readonly owner: string,
    readonly folder: string,
    readonly space: { readonly freeBytes: number; readonly sizeBytes: number } | undefined,
    options: { cause?: unknown } = {},
  ) {
    const free = space
      ? `${describeBytes(space.freeBytes)} free of ${describeBytes(space.sizeBytes)}`
      : "its free space unknown";
    super(
      `${owner} ran out of temporary space: the disk of ${folder} is full (${free}). Give each batch less (a smaller max_bytes_per_batch, max_files_per_batch or max_rows_per_batch on the flow), or give the function more ephemeral storage (Lambda's /tmp, up to 10 GB); locally, free space under ${folder} or point TMPDIR at a larger disk`,
      { ...options, data: { owner, folder, ...(space ?? {}) } },
    );
  }
}

/**
 * A flow's query no longer fits its table (a dropped or renamed column, a type that would lose
 * data): only a full refresh of the dataset, which recreates the table from the new query, applies it.
 */
export class IncompatibleSchemaChangeError extends EngineError {
  override readonly name = "IncompatibleSchemaChangeError";
  override readonly errorCode = "INCOMPATIBLE_SCHEMA_CHANGE";
  constructor(
    readonly dataset: string,
    readonly problems: readonly string[],
  ) {
    super(
      `the new definition of ${dataset} is incompatible with its table: ${problems.join("; ")}; fully refresh the dataset to recreate the table ({"refresh": "FULL", "selection": ["${dataset}"], "reset_mode": "DROP"}), or give the query its columns back`,
      { data: { dataset, problems } },
    );
  }
}

/**
 * Records the flow must read next are no longer in its event stream: retention (or a deletion) moved
 * the start of a Kafka partition or Kinesis shard past the flow's position.
 */
export class SourceRecordsExpiredError extends EngineError {
  override readonly name = "SourceRecordsExpiredError";
  override readonly errorCode = "SOURCE_RECORDS_EXPIRED";
  constructor(
    readonly flow: string,
    /** `topic <t> partition <p>` or `stream <s> shard <id>`, with what is gone. */
    readonly gone: readonly string[],
  ) {
    super(
      `flow "${flow}" cannot read on: ${gone.join("; ")}; the records were deleted or expired before the flow read them. Fully refresh the flow's dataset (or reset its checkpoint) to read from what the stream holds now, and, if retention removed them, raise it`,
      { data: { flow, gone } },
    );
  }
}

/** A stateful setting of a flow (watermark, drop_duplicates) names a column its source does not have. */
export class StatefulColumnError extends EngineError {
  override readonly name = "StatefulColumnError";
  override readonly errorCode = "INVALID_PARAMETER_VALUE";
  constructor(
    readonly flow: string,
    readonly setting: string,
    readonly column: string,
    readonly columns: readonly string[],
  ) {
    super(
      `flow "${flow}": ${setting} names the column "${column}", which its source does not have (its columns: ${columns.filter((c) => !c.startsWith("__ebb_")).join(", ")}); name one of those`,
      { data: { flow, setting, column } },
    );
  }
}

/**
 * A batch as small as a batch gets (one file, one record) failed for size: it needs more than the
 * task function holds. Names the flow, what the batch held, the bytes it needs and the bound that
 * fits the function, and the way out.
 */
export class BatchTooLargeError extends EngineError {
  override readonly name = "BatchTooLargeError";
  override readonly errorCode = "BATCH_TOO_LARGE";
  constructor(
    readonly flow: string,
    what: string,
    readonly bytesNeeded: number | undefined,
    readonly fittingBytes: number,
    reason: string,
    options: { cause?: unknown } = {},
  ) {
    super(
      `flow "${flow}" cannot run its next batch: ${what} failed for size (${reason}) and a batch cannot be smaller; ` +
        `${bytesNeeded !== undefined ? `it needs more than its ${describeBytes(bytesNeeded)}, ` : ""}while batches of about ${describeBytes(fittingBytes)} fit this function: ` +
        `split the file into files below ${describeBytes(fittingBytes)}, or give the task functions more memory and temporary space ` +
        `(EbbProps taskMemorySize and taskEphemeralStorageSize, up to 10,240 MB each)`,
      {
        ...options,
        data: {
          flow,
          ...(bytesNeeded !== undefined ? { bytes_needed: bytesNeeded } : {}),
          fitting_bytes: fittingBytes,
        },
      },
    );
  }
}

/**
 * A JSON or CSV file larger than the batch's byte bound: unlike Parquet (read by row groups), it
 * cannot be read in parts, so it is refused when planned, before any of it is read.
 */
export class FileAboveBatchBoundError extends EngineError {
  override readonly name = "FileAboveBatchBoundError";
  override readonly errorCode = "BATCH_TOO_LARGE";
  constructor(
    readonly flow: string,
    readonly key: string,
    readonly location: string,
    readonly bytes: number,
    readonly boundBytes: number,
    format: string,
  ) {
    super(
      `flow "${flow}" cannot read the file ${key} under ${location}: it is ${describeBytes(bytes)}, more than the flow's batch bound of ${describeBytes(boundBytes)}, ` +
        `and a ${format.toUpperCase()} file is read whole (Parquet is read by row groups). Split it into files below ${describeBytes(boundBytes)}, ` +
        `or raise the bound: the flow's max_bytes_per_batch, or the task functions' ephemeral storage and memory ` +
        `(EbbProps taskEphemeralStorageSize and taskMemorySize, which set the default)`,
      { data: { flow, key, location, bytes, bound_bytes: boundBytes } },
    );
  }
}

/**
 * Not a failure the user sees: the batch in progress failed for size and was marked so; the flow
 * runner plans it again, smaller (micro-batch.ts step 1).
 */
export class BatchOversizedError extends EngineError {
  override readonly name = "BatchOversizedError";
  constructor(
    readonly flow: string,
    readonly seq: number,
    readonly reason: string,
    options: { cause?: unknown } = {},
  ) {
    super(`flow "${flow}"'s batch ${seq} failed for size (${reason}); it is planned again in halves`, {
      ...options,
      data: { flow, seq },
    });
  }
}

/**
 * A row failed an expectation whose `on_violation` is `fail` (Databricks' `ON VIOLATION FAIL UPDATE`,
 * error class EXPECTATION_VIOLATION): the flow's batch is not committed, and the update fails.
 */
export class ExpectationViolationError extends EngineError {
  override readonly name = "ExpectationViolationError";
  override readonly errorCode = "EXPECTATION_VIOLATION";
  constructor(
    readonly dataset: string,
    readonly flow: string,
    readonly expectation: string,
    readonly condition: string,
    readonly failedRecords: number,
    /** One failing row, as JSON. */
    readonly sampleRow: string,
  ) {
    super(
      `flow "${flow}" failed expectation "${expectation}" of dataset "${dataset}" (${condition}) on ${failedRecords} row${failedRecords === 1 ? "" : "s"}, e.g. ${sampleRow}; nothing of the batch was committed. Fix the data (or the flow's SQL) and run again, or change the expectation's on_violation to drop (remove such rows) or warn (keep and count them)`,
      { data: { dataset, flow, expectation, condition, failedRecords, sampleRow } },
    );
  }
}

/** An expectation's condition that does not apply to the rows a flow writes (an unknown column, not a boolean). */
export class ExpectationConditionError extends EngineError {
  override readonly name = "ExpectationConditionError";
  override readonly errorCode = "EXPECTATION_CONDITION_INVALID";
}
