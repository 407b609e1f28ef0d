import { DEFINITION_ISSUE_CODES, DefinitionError, type DefinitionIssue } from "./errors.ts";
import type { PipelineDefinition } from "./definition-schema.ts";
import { parseDefinition, readDefinitionText } from "./parse-definition.ts";
import { nameIssues } from "./definition-names.ts";
import { readSettings, type PipelineSettings } from "./pipeline-settings.ts";
import { translateDefinition } from "./sql-dialect.ts";
import { queriesOf, resolveReferences } from "./dataset-references.ts";
import { buildPipelineGraph, type PipelineGraph } from "./pipeline-graph.ts";
import { rewindIssues } from "./rewind-eligibility.ts";
import { autoCdcIssues } from "./auto-cdc-rules.ts";
import { expectationIssues } from "./expectation-rules.ts";
import type { SqlAnalysis, TableReference } from "./sql-references.ts";
import type { StreamAggregation } from "./stream-aggregation.ts";
import { streamJoinOf, type StreamJoinAnalysis } from "./stream-join.ts";
import { compilePipeline, type PipelinePlans } from "./plan/index.ts";

/** What parses SQL into table references (`SqlReferenceParser`, one per process is enough). */
export interface SqlAnalyzer {
  analyze(sql: string): Promise<SqlAnalysis>;
  /** Whether `condition` is exactly one boolean expression (no clause, no subquery). */
  analyzeCondition(condition: string): Promise<SqlAnalysis>;
  /** SQL text of a parsed statement (`analyze`'s `statement`), for the plans' rewritten SQL. */
  deparse(statement: unknown): Promise<string>;
}

/**
 * What creating a Delta table would say of a dataset's table properties: the refusal (its message and
 * error code), or undefined when they are fine. The Delta layer's `tablePropertiesError`; a port, so
 * the definition language stays below the table format.
 */
export type TablePropertiesCheck = (
  properties: Readonly<Record<string, string>>,
) => { readonly message: string; readonly errorCode: string } | undefined;

/** A definition that passed every rule, with its settings, DAG and the plan of each flow and view. */
export interface ValidatedPipeline {
  /** The definition with its SQL in DuckDB's dialect (translated from Spark's when it is written so): what runs. */
  readonly definition: PipelineDefinition;
  /** The definition as written (its SQL in its own dialect): what is stored and shown. */
  readonly written: PipelineDefinition;
  readonly settings: PipelineSettings;
  readonly graph: PipelineGraph;
  /** What each flow and materialized view runs, compiled once (plan/index.ts). */
  readonly plans: PipelinePlans;
}

/**
 * Validates a definition (a plain value, e.g. a request body) in four steps, each reporting every
 * problem it finds before failing with one `DefinitionError`:
 *
 * 1. Structure (the zod schema): types, allowed fields and values, identifiers.
 * 2. Names and settings (with `pipelines.sqlDialect: spark`, the SQL translated to DuckDB's, or refused
 *    construct by construct with UNSUPPORTED_SQL): unique dataset and flow names, reserved names, configuration values, the
 *    datasets' Delta table properties (refused as creating the table would refuse them).
 * 3. SQL: each query parsed by DuckDB; each table it names (and each stream source) must be a dataset
 *    of this pipeline; `owns` predicates, AUTO CDC conditions and expectations must parse and read no
 *    table; expectation names are unique per dataset;
 *    AUTO CDC targets have one writer; rewind eligibility.
 * 4. The graph: no cycles.
 *
 * Then it compiles the plan of each flow and materialized view from the statements it parsed.
 */
export async function validatePipeline(
  input: unknown,
  analyzer: SqlAnalyzer,
  tableProperties: TablePropertiesCheck,
): Promise<ValidatedPipeline> {
  const written = parseDefinition(input);
  const issues: DefinitionIssue[] = [...nameIssues(written)];
  const settingsResult = readSettings(written.configuration);
  if (!settingsResult.ok) issues.push(...settingsResult.issues);
  // Spark SQL becomes DuckDB SQL here, once per definition version: every later rule and the engine read DuckDB's.
  const translated = translateDefinition(
    written,
    settingsResult.ok ? settingsResult.settings.sqlDialect : "duckdb",
  );
  issues.push(...translated.issues);
  const definition = translated.definition;

  const referencesByPath = new Map<string, readonly TableReference[]>();
  const statements = new Map<string, unknown>();
  for (const query of queriesOf(definition)) {
    const analysis = await analyzer.analyze(query.sql);
    if (analysis.ok && analysis.aggregation && query.isFlowQuery)
      issues.push(...aggregationIssues(definition, query.path, query.flow!, analysis.aggregation));
    if (analysis.ok && query.isFlowQuery) {
      const join = joinOfFlow(definition, query.flow!, analysis.statement);
      if (join?.kind === "refused") issues.push(joinIssue(query.path, query.flow!, join));
    }
    if (analysis.ok) {
      referencesByPath.set(query.path, analysis.references);
      statements.set(query.path, analysis.statement);
    } else
      issues.push({
        path: query.path,
        message: `SQL of ${query.flow ? `flow "${query.flow}"` : `dataset "${query.dataset}"`} ${analysis.message}`,
      });
  }
  issues.push(...tablePropertyIssues(definition, tableProperties));
  issues.push(...(await ownsIssues(definition, analyzer)));
  issues.push(...(await autoCdcIssues(definition, (condition) => analyzer.analyzeCondition(condition))));
  issues.push(...(await expectationIssues(definition, (condition) => analyzer.analyzeCondition(condition))));
  const resolved = resolveReferences(definition, referencesByPath);
  issues.push(...resolved.issues);
  if (settingsResult.ok) issues.push(...rewindIssues(definition, settingsResult.settings));
  if (issues.length > 0 || !settingsResult.ok) throw new DefinitionError(issues);

  const built = buildPipelineGraph(
    definition.datasets.map((dataset) => dataset.name),
    resolved.edges,
  );
  if (!built.ok) {
    const names = [...new Set(built.cycle)].map((name) => `"${name}"`).join(", ");
    throw new DefinitionError([
      {
        path: "datasets",
        message: `datasets ${names} read each other in a cycle (${built.cycle.join(" → ")}): a pipeline must be a DAG; remove one of the reads`,
      },
    ]);
  }
  // Ebb's own SQL (the "SELECT 1" each rewriting plan builds on) is parsed once per compile, not per dataset.
  const ownTrees = new Map<string, Promise<unknown>>();
  const parseOwn = async (sql: string): Promise<unknown> => {
    const analysis = await analyzer.analyze(sql);
    if (!analysis.ok) throw new RangeError(`Ebb's own SQL does not parse: ${analysis.message}`);
    return analysis.statement;
  };
  const plans = await compilePipeline(definition, built.graph, statements, {
    parse: (sql) => {
      const known = ownTrees.get(sql) ?? parseOwn(sql);
      ownTrees.set(sql, known);
      return known;
    },
    deparse: (statement) => analyzer.deparse(statement),
  });
  return { definition, written, settings: settingsResult.settings, graph: built.graph, plans };
}

/** Validates YAML or JSON text. */
export async function validatePipelineText(
  text: string,
  analyzer: SqlAnalyzer,
  tableProperties: TablePropertiesCheck,
): Promise<ValidatedPipeline> {
  return validatePipeline(readDefinitionText(text), analyzer, tableProperties);
}

/** Each dataset's Delta table properties, refused now as creating its table would refuse them. */
function tablePropertyIssues(
  definition: PipelineDefinition,
  tablePropertiesError: TablePropertiesCheck,
): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  for (const [d, dataset] of definition.datasets.entries()) {
    if (!("properties" in dataset) || !dataset.properties) continue;
    const error = tablePropertiesError(dataset.properties);
    if (error) {
      issues.push({
        path: `datasets[${d}].properties`,
        message: `dataset "${dataset.name}": ${error.message}`,
        code: error.errorCode,
      });
    }
  }
  return issues;
}

/**
 * `owns` is a condition on the table's own rows, spliced into the DELETE of an owned-rows reset: it
 * must parse as exactly one expression, with no subquery (so it reads no table and no file).
 */
async function ownsIssues(definition: PipelineDefinition, analyzer: SqlAnalyzer): Promise<DefinitionIssue[]> {
  const issues: DefinitionIssue[] = [];
  for (const [d, dataset] of definition.datasets.entries()) {
    if (dataset.type !== "streaming_table") continue;
    for (const [f, flow] of dataset.flows.entries()) {
      if (flow.owns === undefined) continue;
      const analysis = await analyzer.analyzeCondition(flow.owns);
      if (!analysis.ok) {
        issues.push({
          path: `datasets[${d}].flows[${f}].owns`,
          message: `owns of flow "${flow.name}" is not a SQL condition on the table's own columns (e.g. "region = 'eu'"): ${analysis.message}`,
        });
      }
    }
  }
  return issues;
}

/**
 * A stream-stream join flow: its SQL must join `source` with the joined stream (INNER or LEFT) under
 * an event-time range, or its state could never be let go. (Missing watermarks are the schema's.)
 */
/** The stream-stream join of a flow that declares one (undefined: it declares none). */
function joinOfFlow(
  definition: PipelineDefinition,
  flowName: string,
  statement: unknown,
): StreamJoinAnalysis | undefined {
  const flow = definition.datasets
    .flatMap((dataset) => (dataset.type === "streaming_table" ? dataset.flows : []))
    .find((candidate) => candidate.name === flowName);
  if (!flow?.join || !flow.watermark || !flow.join.watermark) return undefined;
  return streamJoinOf(statement, {
    stream: flow.join.stream,
    leftTime: flow.watermark.column,
    rightTime: flow.join.watermark.column,
  });
}

function joinIssue(
  path: string,
  flowName: string,
  join: Extract<StreamJoinAnalysis, { kind: "refused" }>,
): DefinitionIssue {
  return {
    path,
    code:
      join.reason === "time-bound"
        ? DEFINITION_ISSUE_CODES.joinTimeBoundRequired
        : DEFINITION_ISSUE_CODES.streamJoin,
    message: `flow "${flowName}" ${join.message}`,
  };
}

/**
 * A flow that aggregates its stream: only a windowed aggregation, over the flow's watermark column, is
 * kept incrementally (a window is written once, when the watermark passes its end).
 */
function aggregationIssues(
  definition: PipelineDefinition,
  path: string,
  flowName: string,
  aggregation: StreamAggregation,
): DefinitionIssue[] {
  if (aggregation.kind === "refused")
    return [
      {
        path,
        code: DEFINITION_ISSUE_CODES.streamingAggregation,
        message: `flow "${flowName}" ${aggregation.message}`,
      },
    ];
  const flow = definition.datasets
    .flatMap((dataset) => (dataset.type === "streaming_table" ? dataset.flows : []))
    .find((candidate) => candidate.name === flowName);
  if (!flow) return [];
  const column = aggregation.window.column;
  if (flow.auto_cdc)
    return [
      {
        path,
        code: DEFINITION_ISSUE_CODES.streamingAggregation,
        message: `flow "${flowName}" is an AUTO CDC flow: its SQL gives change events, not windows; aggregate in a flow upstream`,
      },
    ];
  if (flow.watermark?.column === column) return [];
  return [
    {
      path,
      code: DEFINITION_ISSUE_CODES.watermarkRequired,
      message: flow.watermark
        ? `flow "${flowName}" windows by ${column} but its watermark is on ${flow.watermark.column}: a window is written when the watermark passes its end, so window by the watermark column or move the watermark to ${column}`
        : `flow "${flowName}" aggregates per window of ${column}, which needs a watermark to know when a window is complete: add watermark: {column: ${column}, delay: "10 minutes"} to the flow`,
    },
  ];
}
