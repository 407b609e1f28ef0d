import {
  ProjectError,
  PROJECT_ISSUE_CODES,
  formatLocation,
  type ProjectIssue,
  type ProjectLocation,
  StatementProblem,
} from "./errors.ts";
import { selectLibraryFiles } from "./library-files.ts";
import { readProjectSpec, DEFAULT_CATALOG, DEFAULT_SCHEMA } from "./project-spec.ts";
import { substituteVariables } from "./source-text.ts";
import { splitStatements, tokenize } from "./sql-tokens.ts";
import { parseStatement } from "./statement-parser.ts";
import { buildDataflowGraph, type StatementAt } from "./dataflow-graph.ts";

/**
 * A pipeline project (a `spark-pipeline.yml` spec and the SQL files its `libraries` select) as Ebb's
 * pipeline definition, ready for `validatePipeline` like a YAML one:
 *
 * 1. Read the spec; select the files; substitute `${name}` from its configuration.
 * 2. Split each file into statements and parse each (a problem in one does not hide the others').
 * 3. Build the dataflow graph across all files (dataflow-graph.ts).
 * 4. Any problem: one `ProjectError` with them all, each with its file, line and column; else the
 *    definition, with `pipelines.sqlDialect: spark` (its SQL is Spark SQL, kept as written).
 */

export const SQL_DIALECT_KEY = "pipelines.sqlDialect";

export interface PipelineProject {
  /** The spec's path relative to the project's root (`spark-pipeline.yml`). */
  readonly specPath: string;
  readonly spec: string;
  /** The project's files by path relative to the spec's folder (`transformations/orders.sql`). */
  readonly files: ReadonlyMap<string, string>;
  /** Configuration set at deploy time (`ebb deploy --conf k=v`), over the spec's, before `${k}` is replaced. */
  readonly configuration?: Readonly<Record<string, string>>;
  /** The pipeline's catalog and schema where its settings name them (Databricks' `catalog`/`schema`), over the spec's. */
  readonly catalog?: string;
  readonly schema?: string;
}

/** The settings a spec gives, when SQL files come without one (`libraries` naming `.sql` files). */
export interface ProjectSettings {
  readonly name: string;
  readonly catalog?: string;
  readonly schema?: string;
  readonly configuration?: Readonly<Record<string, string>>;
}

export interface ProjectDefinition {
  /** The pipeline definition (name, catalog, schema, configuration, datasets), not yet validated. */
  readonly definition: {
    readonly name: string;
    readonly catalog: string;
    readonly schema: string;
    readonly configuration: Readonly<Record<string, string>>;
    readonly datasets: readonly Record<string, unknown>[];
  };
  /** Spec fields Ebb reads and does not act on, with why. */
  readonly ignored: readonly { readonly field: string; readonly reason: string }[];
  /**
   * The file, line and column of a definition path (`datasets[1].flows[0].sql`), so a problem the
   * validator finds in the built definition points into the project's files.
   */
  readonly locate: (path: string) => ProjectLocation | undefined;
}

export function readPipelineProject(project: PipelineProject): ProjectDefinition {
  const specResult = readProjectSpec(project.specPath, project.spec);
  if (!specResult.ok) throw new ProjectError(specResult.issues);
  const spec = {
    ...specResult.spec,
    configuration: { ...specResult.spec.configuration, ...project.configuration },
    catalog: project.catalog ?? specResult.spec.catalog,
    schema: project.schema ?? specResult.spec.schema,
  };
  const selected = selectLibraryFiles(project.specPath, spec.include, project.files);
  const files = new Map(selected.sql.map((path) => [path, project.files.get(path)!]));
  return {
    ...readSqlFiles(spec, files, selected.issues),
    ignored:
      spec.storage !== undefined
        ? [{ field: "storage", reason: "checkpoints and tables live in Ebb's bucket" }]
        : [],
  };
}

/** SQL definition files without a spec (`libraries: [{file: {path: "….sql"}}]`), with the request's settings. */
export function readSqlFiles(
  settings: ProjectSettings,
  files: ReadonlyMap<string, string>,
  earlier: readonly ProjectIssue[] = [],
): Omit<ProjectDefinition, "ignored"> & { ignored: [] } {
  const catalog = settings.catalog ?? DEFAULT_CATALOG;
  const schema = settings.schema ?? DEFAULT_SCHEMA;
  const configuration = settings.configuration ?? {};
  const issues: ProjectIssue[] = [...earlier];
  const statements: StatementAt[] = [];
  for (const [path, text] of files) {
    const { source, issues: variableIssues } = substituteVariables(path, text, configuration);
    issues.push(...variableIssues);
    const tokenized = tokenize(source.text);
    if (!tokenized.ok) {
      issues.push({
        ...source.locate(tokenized.offset),
        code: PROJECT_ISSUE_CODES.syntaxError,
        message: tokenized.message,
      });
      continue;
    }
    for (const tokens of splitStatements(tokenized.tokens)) {
      try {
        statements.push({ statement: parseStatement(tokens, source.text), source });
      } catch (error) {
        if (!(error instanceof StatementProblem)) throw error;
        issues.push({ ...source.locate(error.offset), code: error.code, message: error.message });
      }
    }
  }
  const graph = buildDataflowGraph(statements, { catalog, schema });
  issues.push(...graph.issues);
  if (issues.length > 0) throw new ProjectError(issues);
  return {
    definition: {
      name: settings.name,
      catalog,
      schema,
      configuration: { ...configuration, [SQL_DIALECT_KEY]: "spark" },
      datasets: graph.datasets,
    },
    ignored: [],
    locate: (path) => {
      const flow = /^datasets\[\d+\](\.flows\[\d+\])?/.exec(path)?.[0];
      return flow === undefined
        ? undefined
        : (graph.locations.get(flow) ?? graph.locations.get(flow.replace(/\.flows.*/, "")));
    },
  };
}

/** `transformations/orders.sql:3:1 (datasets[1].flows[0].sql)`: a definition path with its place in the files. */
export function projectPath(project: Pick<ProjectDefinition, "locate">, path: string): string {
  const at = project.locate(path);
  return at === undefined ? path : `${formatLocation(at)} (${path})`;
}
