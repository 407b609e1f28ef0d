import type { CodedError } from "../errors/coded-error.ts";
import {
  SqlAnalysisError,
  SqlSyntaxError,
  SqlUnknownFunctionError,
  SqlUnknownTableError,
  SUPPORTED_SQL,
} from "./errors.ts";
import type { StatementSource } from "./statement-translation.ts";

/**
 * DuckDB's failure of a translated statement as the Databricks error class a user of the statement
 * expects (`PARSE_SYNTAX_ERROR`, `UNRESOLVED_ROUTINE`, `TABLE_OR_VIEW_NOT_FOUND`), naming sources as
 * the statement wrote them rather than by the relations they were loaded into. Pure.
 */
export function statementFailure(message: string, sources: readonly StatementSource[]): CodedError {
  let text = message.replace(/^the SQL of the statement (?:failed|does not parse): /, "");
  for (const source of sources) text = text.replaceAll(source.relation, describeSource(source));
  const options = { data: { duckdb: text } };
  const fn = /(?:Scalar|Aggregate|Table) Function with name "?([\w$]+)"? does not exist/i.exec(text);
  if (fn) {
    return new SqlUnknownFunctionError(
      `the function ${fn[1]} is not one Ebb runs. ${SUPPORTED_SQL}`,
      options,
    );
  }
  const table = /Table with name "?([\w$.]+)"? does not exist/i.exec(text);
  if (table) {
    return new SqlUnknownTableError(
      `the table or view ${table[1]} is not one the statement can read: name a table catalog.schema.table (or send catalog and schema), or define it in a WITH clause. ${SUPPORTED_SQL}`,
      options,
    );
  }
  if (/Parser Error|syntax error/i.test(text)) {
    return new SqlSyntaxError(`the statement does not parse: ${text}. ${SUPPORTED_SQL}`, options);
  }
  return new SqlAnalysisError(`the statement failed: ${text}`, options);
}

/** A source as the statement named it. */
export function describeSource(source: StatementSource): string {
  switch (source.kind) {
    case "event_log":
      return `event_log('${source.pipelineId}')`;
    case "table_changes":
      return `table_changes('${source.table}', ${source.startingVersion}${source.endingVersion === undefined ? "" : `, ${source.endingVersion}`})`;
    case "history":
      return `(DESCRIBE HISTORY ${source.table})`;
    case "table":
      return source.table;
  }
}
