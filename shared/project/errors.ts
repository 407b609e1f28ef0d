import { CodedError } from "../errors/coded-error.ts";

/**
 * Errors of the pipeline-project front end (a `spark-pipeline.yml` spec and its SQL files, as Spark
 * Declarative Pipelines and Databricks Lakeflow write them). Every problem names its file, line and
 * column and has a code of its own; all of a project's problems are reported at once and nothing is
 * created.
 */

export const PROJECT_ISSUE_CODES = {
  /** The spec (`spark-pipeline.yml`) is not YAML, or a field is missing or of the wrong kind. */
  specInvalid: "PROJECT_SPEC_INVALID",
  /** The spec's `libraries` match no SQL file. */
  noSqlFiles: "PROJECT_NO_SQL_FILES",
  /** A Python definition file (`from pyspark import pipelines as dp`): Ebb reads SQL only. */
  pythonNotSupported: "PROJECT_PYTHON_NOT_SUPPORTED",
  /** Text that is not a pipeline SQL statement Ebb can read. */
  syntaxError: "PROJECT_SQL_SYNTAX_ERROR",
  /** A clause or statement SDP or Lakeflow has that Ebb does not carry out. */
  unsupportedClause: "PROJECT_UNSUPPORTED_CLAUSE",
  /** A `${name}` the spec's `configuration` does not set. */
  unknownVariable: "PROJECT_UNKNOWN_VARIABLE",
  /** A query or flow names a table or view no file of the project defines. */
  unknownDataset: "PROJECT_UNKNOWN_DATASET",
  /** Two statements (in one file or across files) define the same table, view or flow. */
  duplicateDefinition: "PROJECT_DUPLICATE_DEFINITION",
  /** A `CREATE FLOW … INSERT INTO` or `AUTO CDC INTO` whose target is not a streaming table. */
  flowIntoMaterializedView: "PROJECT_FLOW_INTO_NON_STREAMING_TABLE",
  /** A streaming table declared without a query and with no flow into it. */
  datasetWithoutFlow: "PROJECT_DATASET_WITHOUT_FLOW",
  /** Datasets that read each other in a circle (within one file or across files). */
  dependencyCycle: "PROJECT_DEPENDENCY_CYCLE",
} as const;

export type ProjectIssueCode = (typeof PROJECT_ISSUE_CODES)[keyof typeof PROJECT_ISSUE_CODES];

/**
 * A problem at an offset of the file's text, with its code: what the statement reader, the query
 * scan and the graph throw, and the project reader turns into a located `ProjectIssue`. Coded, so
 * one that a caller does not catch still answers its own `PROJECT_*` code, never `INTERNAL_ERROR`.
 */
export class StatementProblem extends CodedError {
  override readonly name = "StatementProblem";
  override readonly errorCode: string;
  override readonly httpStatus = 400;
  constructor(
    readonly offset: number,
    readonly code: ProjectIssueCode,
    message: string,
  ) {
    super(message, { data: { offset } });
    this.errorCode = code;
  }
}

/** Where in the project a problem is: a file relative to the spec, and a 1-based line and column. */
export interface ProjectLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export interface ProjectIssue extends ProjectLocation {
  readonly code: ProjectIssueCode;
  readonly message: string;
}

/** Problems a message lists (the count says how many there are), as `DefinitionError` does. */
const LISTED_ISSUES = 50;

/** A pipeline project that cannot be deployed, with every problem found. */
export class ProjectError extends CodedError {
  override readonly name = "ProjectError";
  /** The issues' own code when they all share one, else `INVALID_PIPELINE_PROJECT`. */
  override readonly errorCode: string;
  override readonly httpStatus = 400;

  constructor(readonly issues: readonly ProjectIssue[]) {
    super(describe(issues), {
      data: { issues: issues.slice(0, LISTED_ISSUES), issueCount: issues.length },
    });
    const codes = new Set(issues.map((issue) => issue.code));
    const [only] = codes;
    this.errorCode = codes.size === 1 && only !== undefined ? only : "INVALID_PIPELINE_PROJECT";
  }
}

/** `transformations/orders.sql:3:14`, the form editors and compilers link. */
export function formatLocation(at: ProjectLocation): string {
  return `${at.file}:${at.line}:${at.column}`;
}

function describe(issues: readonly ProjectIssue[]): string {
  const lines = issues
    .slice(0, LISTED_ISSUES)
    .map((issue) => `${formatLocation(issue)}: ${issue.code}: ${issue.message}`);
  if (issues.length > LISTED_ISSUES)
    lines.push(`… and ${issues.length - LISTED_ISSUES} more: fix these first, then deploy again`);
  const head =
    issues.length === 1 ? "invalid pipeline project" : `invalid pipeline project (${issues.length} problems)`;
  return `${head}:\n  ${lines.join("\n  ")}`;
}
