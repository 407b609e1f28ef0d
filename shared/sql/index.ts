/** Databricks SQL for the statements endpoint: the translator, the result shape, the refusals. */
export {
  translateStatement,
  type StatementSource,
  type TranslatedStatement,
  type TranslationContext,
} from "./statement-translation.ts";
export {
  statementChunk,
  statementManifest,
  type ResultChunk,
  type ResultColumn,
  type StatementResult,
} from "./statement-result.ts";
export { PARAMETER_TYPE, parameterLiteral } from "./statement-parameters.ts";
export { statementFailure } from "./statement-failures.ts";
export {
  SqlAnalysisError,
  SqlNotSupportedError,
  SqlSyntaxError,
  SqlUnknownFunctionError,
  SqlUnknownTableError,
  SUPPORTED_SQL,
} from "./errors.ts";
export { travelledReferences, type TimeTravel, type TravelledReference } from "./time-travel-clause.ts";
