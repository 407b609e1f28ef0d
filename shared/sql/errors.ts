import { CodedError } from "../errors/coded-error.ts";

/**
 * The SQL endpoint's refusals (api.md "SQL statements"). Each says what Ebb's SQL supports, since the
 * statement was written for Databricks, whose SQL is wider.
 */

/** What the endpoint runs, for the messages of every refusal. */
export const SUPPORTED_SQL =
  "Ebb runs one query (SELECT, WITH, VALUES or DESCRIBE HISTORY) over event_log('<pipeline-id>'), " +
  "table_changes('<catalog.schema.table>', <from>[, <to>]), DESCRIBE HISTORY <table> and tables by " +
  "catalog.schema.table, in Spark SQL's dialect as pipelines run it (docs/sql.md lists the functions " +
  "it runs and those it refuses)";

/** A Databricks form the translator does not handle (another table-valued function, a statement). */
export class SqlNotSupportedError extends CodedError {
  override readonly name = "SqlNotSupportedError";
  override readonly errorCode = "SQL_NOT_SUPPORTED";
  override readonly httpStatus = 400;

  constructor(what: string, options: { cause?: unknown } = {}) {
    super(`${what}. ${SUPPORTED_SQL}`, options);
  }
}

/** The statement does not parse after translation (Databricks' `PARSE_SYNTAX_ERROR`). */
export class SqlSyntaxError extends CodedError {
  override readonly name = "SqlSyntaxError";
  override readonly errorCode = "PARSE_SYNTAX_ERROR";
  override readonly httpStatus = 400;
}

/** A function the statement calls exists neither in the translation nor in DuckDB (`UNRESOLVED_ROUTINE`). */
export class SqlUnknownFunctionError extends CodedError {
  override readonly name = "SqlUnknownFunctionError";
  override readonly errorCode = "UNRESOLVED_ROUTINE";
  override readonly httpStatus = 400;
}

/** A table or view the statement reads is not one it can name (`TABLE_OR_VIEW_NOT_FOUND`). */
export class SqlUnknownTableError extends CodedError {
  override readonly name = "SqlUnknownTableError";
  override readonly errorCode = "TABLE_OR_VIEW_NOT_FOUND";
  override readonly httpStatus = 400;
}

/** A column, a type or another binding the statement gets wrong (`UNRESOLVED_COLUMN` and kin). */
export class SqlAnalysisError extends CodedError {
  override readonly name = "SqlAnalysisError";
  override readonly errorCode = "SQL_ANALYSIS_ERROR";
  override readonly httpStatus = 400;
}

/**
 * Spark SQL Ebb cannot run with Spark's answer (a function it does not translate, or translates only
 * in part): refused where the SQL is accepted, with where it is, never run to a different answer.
 */
export class SqlUnsupportedError extends CodedError {
  override readonly name = "SqlUnsupportedError";
  override readonly errorCode = "UNSUPPORTED_SQL";
  override readonly httpStatus = 400;
  /** 1-based, in the SQL text as written. */
  readonly line: number;
  readonly column: number;

  constructor(what: string, at: { line: number; column: number }) {
    super(`line ${at.line}, column ${at.column}: ${what}`, { data: { ...at } });
    this.line = at.line;
    this.column = at.column;
  }
}
