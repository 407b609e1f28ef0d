import { CodedError } from "../errors/coded-error.ts";

/**
 * Errors of the Delta module: one base class and a subclass per failure, each with a stable `name`,
 * the `cause` it wraps, and the data a caller needs to act on it. Expected races (a commit version
 * already taken) are results, not errors; these are for states a caller cannot retry away.
 */
export class DeltaError extends CodedError {
  override readonly name: string = "DeltaError";
}

/** No Delta table at the location: `_delta_log/` holds no commit and no checkpoint. */
export class TableNotFoundError extends DeltaError {
  override readonly name = "TableNotFoundError";
  override readonly errorCode = "RESOURCE_DOES_NOT_EXIST";
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
  override readonly errorCode = "INVALID_PARAMETER_VALUE";
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
  override readonly errorCode = "INVALID_PARAMETER_VALUE";
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
  override readonly errorCode = "DELTA_UNSUPPORTED_FEATURE";
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
  override readonly errorCode: string = "DELTA_LOG_CORRUPT";
  override readonly httpStatus: number = 409;
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
  override readonly errorCode = "DELTA_SCHEMA_INVALID";
  override readonly httpStatus = 409;
}

// ---- Writer errors (commit, operations, restore, vacuum) ----

/** A column name Delta cannot store without column mapping (table/column-names.ts). */
export class InvalidColumnNameError extends DeltaError {
  override readonly name = "InvalidColumnNameError";
  override readonly errorCode = "DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES";
  constructor(
    readonly column: string,
    where = "",
  ) {
    super(
      `column "${column}"${where} has a character Delta tables without column mapping cannot hold (one of space , ; { } ( ) newline tab =): rename it, e.g. with AS in the query that writes the table`,
      { data: { column } },
    );
  }
}

/**
 * A table property that would turn on a Delta feature Ebb does not write (deletion vectors, column
 * mapping, row tracking, in-commit timestamps, CHECK constraints): refused when the table is
 * created, not stored as if it held.
 */
export class UnsupportedTablePropertyError extends DeltaError {
  override readonly name = "UnsupportedTablePropertyError";
  override readonly errorCode = "UNSUPPORTED_TABLE_PROPERTY";
  constructor(
    readonly key: string,
    readonly value: string,
    readonly feature: string,
    wayOut: string,
  ) {
    super(
      `table property ${key}=${JSON.stringify(value)} needs the Delta feature ${feature}, which Ebb does not write: ${wayOut}`,
      {
        data: { key, value, feature },
      },
    );
  }
}

/** A `delta.*` table property whose value the writer cannot interpret. */
export class InvalidTablePropertyError extends DeltaError {
  override readonly name = "InvalidTablePropertyError";
  override readonly errorCode = "INVALID_TABLE_PROPERTY";
  constructor(
    readonly key: string,
    readonly value: string,
    expected: string,
    options: { cause?: unknown } = {},
  ) {
    super(`table property ${key}=${JSON.stringify(value)} is invalid: expected ${expected}`, {
      ...options,
      data: { key, value },
    });
  }
}

/** `create` found a table already there (version 0 exists). Open it instead. */
export class TableAlreadyExistsError extends DeltaError {
  override readonly name = "TableAlreadyExistsError";
  override readonly errorCode = "RESOURCE_ALREADY_EXISTS";
  override readonly httpStatus = 409;
  constructor(readonly location: string) {
    super(`a Delta table already exists at ${location || "(root)"}: open it instead of creating it`, {
      data: { location },
    });
  }
}

/** Why a concurrent commit makes this one invalid (iceberg-style failed requirement). */
export type ConflictKind =
  | "concurrent-delete-read"
  | "concurrent-delete-delete"
  | "metadata-changed"
  | "protocol-changed"
  | "concurrent-restore"
  | "concurrent-append"
  | "concurrent-transaction";

/**
 * A commit lost the race to a concurrent commit it logically conflicts with (Delta's
 * `ConcurrentModificationException` family). Nothing of this commit is in the log; its data files
 * are orphans that VACUUM will collect. Re-read the table and redo the operation.
 */
export class CommitConflictError extends DeltaError {
  override readonly name = "CommitConflictError";
  override readonly errorCode = "RESOURCE_CONFLICT";
  constructor(
    readonly kind: ConflictKind,
    /** The version this commit read. */
    readonly readVersion: number,
    /** The concurrent commit it conflicts with. */
    readonly winningVersion: number,
    readonly detail: {
      readonly operation?: string;
      readonly paths?: readonly string[];
      readonly appId?: string;
    },
  ) {
    super(
      `commit conflicts with concurrent version ${winningVersion} (${kind}${
        detail.operation ? `, ${detail.operation}` : ""
      }${detail.paths?.length ? `: ${detail.paths.slice(0, 5).join(", ")}` : ""}${
        detail.appId ? `: txn ${detail.appId}` : ""
      }); re-read the table at its latest version and retry the operation`,
      { data: { kind, readVersion, winningVersion, ...detail } },
    );
  }
}

/** The commit kept losing races without conflicting; the table is under heavy contention. */
export class CommitRetriesExhaustedError extends DeltaError {
  override readonly name = "CommitRetriesExhaustedError";
  override readonly errorCode = "RESOURCE_CONFLICT";
  constructor(
    readonly attempts: number,
    readonly lastVersionTried: number,
  ) {
    super(
      `commit gave up after ${attempts} attempts (last tried version ${lastVersionTried}): too many concurrent writers; retry later`,
      { data: { attempts, lastVersionTried } },
    );
  }
}

/** RESTORE target references data files that no longer exist (vacuumed). Nothing was written. */
export class RestoreFilesMissingError extends DeltaError {
  override readonly name = "RestoreFilesMissingError";
  override readonly errorCode = "RESTORE_FILES_MISSING";
  override readonly httpStatus = 409;
  constructor(
    readonly targetVersion: number,
    readonly missingFiles: readonly string[],
  ) {
    super(
      `cannot restore to version ${targetVersion}: ${missingFiles.length} of its data files are gone (vacuumed?): ${missingFiles
        .slice(0, 10)
        .join(", ")}${missingFiles.length > 10 ? ", ..." : ""}; choose a later version`,
      { data: { targetVersion, missingFiles } },
    );
  }
}

/** VACUUM with a retention shorter than the table's `delta.deletedFileRetentionDuration`. */
export class RetentionTooShortError extends DeltaError {
  override readonly name = "RetentionTooShortError";
  override readonly errorCode = "INVALID_PARAMETER_VALUE";
  constructor(
    readonly requestedMs: number,
    readonly tableMs: number,
  ) {
    super(
      `VACUUM retention of ${requestedMs / 3_600_000} hours is shorter than the table's delta.deletedFileRetentionDuration (${
        tableMs / 3_600_000
      } hours): readers of older versions may lose files; pass allowShortRetention: true if you are sure`,
      { data: { requestedMs, tableMs } },
    );
  }
}

/** A write whose rows do not fit the table: wrong columns, or a partition column missing. */
export class SchemaMismatchError extends DeltaError {
  override readonly name = "SchemaMismatchError";
  override readonly errorCode = "SCHEMA_MISMATCH";
}

/** `delta.appendOnly=true` forbids removing or rewriting data (PROTOCOL.md "Append-only Tables"). */
export class AppendOnlyTableError extends DeltaError {
  override readonly name = "AppendOnlyTableError";
  override readonly errorCode = "TABLE_APPEND_ONLY";
  override readonly httpStatus = 409;
  constructor(readonly operation: string) {
    super(`${operation} is not allowed: the table is append-only (delta.appendOnly=true)`, {
      data: { operation },
    });
  }
}

/** MERGE found several source rows for one target row: the result would be ambiguous. */
export class MergeDuplicateSourceError extends DeltaError {
  override readonly name = "MergeDuplicateSourceError";
  override readonly errorCode = "MERGE_DUPLICATE_SOURCE_ROWS";
  constructor(readonly keyColumns: readonly string[]) {
    super(
      `MERGE source has more than one row for the same key (${keyColumns.join(", ")}) matching a target row; deduplicate the source`,
      { data: { keyColumns } },
    );
  }
}

/**
 * A commit whose row changes the log does not hold: a DELETE, UPDATE or MERGE that rewrote data files
 * (removed some and added their kept rows again) without change data files, as on a table without
 * `delta.enableChangeDataFeed`. Its removes and adds would read as rows deleted and inserted that
 * never changed, so the feed is refused across it, as Delta refuses it (`DELTA_MISSING_CHANGE_DATA`).
 */
export class ChangeDataNotRecordedError extends DeltaError {
  override readonly name = "ChangeDataNotRecordedError";
  override readonly errorCode = "DELTA_MISSING_CHANGE_DATA";
  constructor(
    readonly version: number,
    readonly operation: string,
    readonly table?: string,
    options: { cause?: unknown } = {},
  ) {
    super(
      `${table ? `table ${table}: ` : ""}change data was not recorded for version ${version}: its ${operation} rewrote data files ` +
        `without change data files (delta.enableChangeDataFeed was not true), so the rows it kept would read as deleted and inserted again. ` +
        `Read the change feed up to version ${version - 1} or from version ${version + 1}; to record the changes of later DELETE, UPDATE and MERGE commits, ` +
        `set the table property delta.enableChangeDataFeed = true (a dataset's properties in its pipeline)`,
      { ...options, data: { version, operation, ...(table ? { table } : {}) } },
    );
  }

  /** The same refusal, naming the table. */
  forTable(table: string): ChangeDataNotRecordedError {
    return new ChangeDataNotRecordedError(this.version, this.operation, table, { cause: this });
  }
}

/**
 * A batch change feed over versions whose schemas cannot be read as one (read/change-feed-schemas.ts),
 * refused as Delta refuses it, with the sub-ranges that can each be read. `table` names the table
 * for the message once a caller knows it (`forTable`).
 */
export class ChangeFeedSchemaChangeError extends DeltaError {
  override readonly name = "ChangeFeedSchemaChangeError";
  override readonly errorCode = "DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE";
  constructor(
    readonly fromVersion: number,
    readonly toVersion: number,
    readonly ranges: readonly (readonly [number, number])[],
    readonly breaks: readonly {
      readonly version: number;
      readonly problems: readonly string[];
      readonly readVersion: number;
    }[],
    readonly table?: string,
    options: { cause?: unknown } = {},
  ) {
    const changes = breaks.map(
      (b) =>
        `at version ${b.version} (${b.problems.join(", ")}, from version ${b.version - 1}'s schema to version ${b.readVersion}'s)`,
    );
    const pieces = ranges.map(([from, to]) => `${from} to ${to}`);
    super(
      `${table ? `table ${table}: ` : ""}the change data feed of versions ${fromVersion} to ${toVersion} cannot be read in one schema: ` +
        `it crosses ${breaks.length === 1 ? "a schema change that is not additive" : "schema changes that are not additive"} ${changes.join(" and ")}. ` +
        `Read versions ${pieces.slice(0, -1).join(", ")} and ${pieces.at(-1)} separately: each range reads in its last version's schema`,
      {
        ...options,
        data: { fromVersion, toVersion, ranges, breaks, ...(table ? { table } : {}) },
      },
    );
  }

  /** The same refusal, naming the table. */
  forTable(table: string): ChangeFeedSchemaChangeError {
    return new ChangeFeedSchemaChangeError(
      this.fromVersion,
      this.toVersion,
      this.ranges,
      this.breaks,
      table,
      {
        cause: this,
      },
    );
  }
}

/**
 * A data file a version's rows (`read: "snapshot"`) or change rows (`read: "changes"`) need is gone:
 * VACUUM deletes the files commits removed once the table's `delta.deletedFileRetentionDuration` has
 * passed, so a version from before then (an abandoned timeline a week after a rewind, say) can no
 * longer be read. The codes are Databricks' for the same failures. `table` names the table for the
 * message once a caller knows it (`forTable`).
 */
export class DataFilesVacuumedError extends DeltaError {
  override readonly name = "DataFilesVacuumedError";
  override readonly errorCode: string;
  constructor(
    readonly read: "snapshot" | "changes",
    /** The versions whose files are gone, ascending (for a snapshot: the one version read). */
    readonly versions: readonly number[],
    readonly path: string,
    /** The table's `delta.deletedFileRetentionDuration` as set, or Delta's default. */
    readonly retention: string,
    readonly table?: string,
    options: { cause?: unknown } = {},
  ) {
    const last = versions.at(-1)!;
    const what =
      read === "snapshot"
        ? `version ${last} can no longer be read`
        : `the change data of version${versions.length > 1 ? `s ${versions.join(", ")}` : ` ${last}`} can no longer be read`;
    const wayOut =
      read === "snapshot"
        ? "read a later version (DESCRIBE HISTORY lists them; the latest always reads)"
        : `read the changes from version ${last + 1} on (starting_version)`;
    super(
      `${table ? `table ${table}: ` : ""}${what}: VACUUM removed its data file ${path}, as it removes every file a commit ` +
        `removed once the table's delta.deletedFileRetentionDuration (${retention}) has passed. ` +
        `${wayOut[0]!.toUpperCase()}${wayOut.slice(1)}; to keep older versions readable from now on, set ` +
        `delta.deletedFileRetentionDuration longer (a dataset's properties in its pipeline)`,
      { ...options, data: { versions, path, retention, ...(table ? { table } : {}) } },
    );
    this.errorCode =
      read === "snapshot" ? "DELTA_FILE_NOT_FOUND_DETAILED" : "DELTA_CHANGE_DATA_FILE_NOT_FOUND";
  }

  /** The same refusal, naming the table. */
  forTable(table: string): DataFilesVacuumedError {
    return new DataFilesVacuumedError(this.read, this.versions, this.path, this.retention, table, {
      cause: this,
    });
  }
}
