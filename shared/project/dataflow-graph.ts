import {
  PROJECT_ISSUE_CODES,
  formatLocation,
  type ProjectIssue,
  type ProjectIssueCode,
  type ProjectLocation,
  StatementProblem,
} from "./errors.ts";
import { scanQuery } from "./query-scan.ts";
import { readCycles } from "./dependency-cycles.ts";
import { withDeclaredColumns } from "./query-splice.ts";
import type { SourceText } from "./source-text.ts";
import { QueryReadResolver, type Defined, type FlowReading } from "./query-reads.ts";
import type { AutoCdcFlowStatement, PipelineStatement, QueryText } from "./statements.ts";

/**
 * The dataflow graph of a project's statements, across all its files (the order of files and of
 * statements never matters), as Ebb's pipeline datasets (definition-schema.ts):
 *
 * 1. Every CREATE STREAMING TABLE / MATERIALIZED VIEW / VIEW defines one dataset; a name defined
 *    twice is refused at the second definition. Every flow (a table's own query, CREATE FLOW) is
 *    attached to its target, which must be a streaming table.
 * 2. Each flow's query reads one stream (`STREAM(x)`, a source function): it becomes the flow's
 *    `source`, and the query's text reads it as `source` (aliased as it was written, or by the
 *    table's name). A temporary view that reads a stream is inlined where it is streamed from, as
 *    SDP runs it (it is not published).
 * 3. Names qualified by the pipeline's own catalog and schema (or `LIVE.`) are its datasets; a read
 *    of a name no file defines is refused where it is written.
 * 4. Datasets that read each other in a circle are refused at each statement of the circle.
 */

export interface StatementAt {
  readonly statement: PipelineStatement;
  readonly source: SourceText;
}

export interface GraphSettings {
  readonly catalog?: string;
  readonly schema?: string;
}

export interface BuiltGraph {
  readonly datasets: readonly Record<string, unknown>[];
  /** Where each dataset (and each of its flows) is defined, by its definition path (`datasets[1].flows[0]`). */
  readonly locations: ReadonlyMap<string, ProjectLocation>;
  readonly issues: readonly ProjectIssue[];
}

export function buildDataflowGraph(statements: readonly StatementAt[], settings: GraphSettings): BuiltGraph {
  return new GraphBuilder(statements, settings).build();
}

class GraphBuilder {
  private readonly issues: ProjectIssue[] = [];
  private readonly defined = new Map<string, Defined>();
  private readonly flowNames = new Map<string, StatementAt>();
  private readonly reads: QueryReadResolver;

  constructor(
    private readonly statements: readonly StatementAt[],
    settings: GraphSettings,
  ) {
    this.reads = new QueryReadResolver(this.defined, settings);
  }

  build(): BuiltGraph {
    for (const at of this.statements) this.define(at);
    for (const at of this.statements) this.attachFlow(at);
    const datasets: Record<string, unknown>[] = [];
    const locations = new Map<string, ProjectLocation>();
    const reads = new Map<string, ReadonlySet<string>>();
    for (const dataset of this.defined.values()) {
      const built = this.guard(dataset.at, () => this.dataset(dataset));
      if (built === undefined) continue;
      reads.set(dataset.name, built.reads);
      if (!built.definition) continue;
      const path = `datasets[${datasets.length}]`;
      locations.set(path, dataset.at.source.locate(dataset.at.statement.start));
      built.flowsAt?.forEach((at, f) =>
        locations.set(`${path}.flows[${f}]`, at.source.locate(at.statement.start)),
      );
      datasets.push(built.definition);
    }
    this.cycleIssues(reads);
    return { datasets, locations, issues: this.issues };
  }

  private define(at: StatementAt): void {
    const { statement } = at;
    if (statement.kind === "append_flow" || statement.kind === "auto_cdc_flow") return;
    const name = this.guard(at, () => this.reads.ownName(statement.name));
    if (name === undefined) return;
    const first = this.defined.get(name.toLowerCase());
    if (first) {
      this.issue(
        at,
        statement.name.start,
        PROJECT_ISSUE_CODES.duplicateDefinition,
        `${name} is already defined at ${formatLocation(first.at.source.locate(first.at.statement.name.start))}: a table or view is defined once in a project; rename or remove one`,
      );
      return;
    }
    this.defined.set(name.toLowerCase(), { name, at, flows: [] });
    if (statement.kind === "streaming_table" && statement.query) this.flowNames.set(name.toLowerCase(), at);
  }

  private attachFlow(at: StatementAt): void {
    const { statement } = at;
    if (statement.kind !== "append_flow" && statement.kind !== "auto_cdc_flow") return;
    this.guard(at, () => {
      const name = this.reads.ownName(statement.name);
      const first = this.flowNames.get(name.toLowerCase());
      if (first) {
        throw new StatementProblem(
          statement.name.start,
          PROJECT_ISSUE_CODES.duplicateDefinition,
          `flow ${name} is already defined at ${formatLocation(first.source.locate(first.statement.name.start))}: flow names are unique in a project`,
        );
      }
      this.flowNames.set(name.toLowerCase(), at);
      const targetName = this.reads.ownName(statement.target);
      const target = this.defined.get(targetName.toLowerCase());
      if (!target)
        throw new StatementProblem(
          statement.target.start,
          PROJECT_ISSUE_CODES.unknownDataset,
          `flow ${name} writes ${targetName}, which no file of the project defines: add CREATE STREAMING TABLE ${targetName};`,
        );
      if (target.at.statement.kind !== "streaming_table")
        throw new StatementProblem(
          statement.target.start,
          PROJECT_ISSUE_CODES.flowIntoMaterializedView,
          `flow ${name} writes ${targetName}, a ${target.at.statement.kind === "view" ? "view" : "materialized view"}: flows write streaming tables only; define ${targetName} with CREATE STREAMING TABLE, or put the query in its definition`,
        );
      target.flows.push(at);
    });
  }

  private dataset(dataset: Defined): {
    definition?: Record<string, unknown>;
    flowsAt?: readonly StatementAt[];
    reads: ReadonlySet<string>;
  } {
    const { statement } = dataset.at;
    const reads = new Set<string>();
    if (statement.kind === "view") {
      if (this.reads.streamsIn(statement.query)) return { reads: this.reads.streamingViewReads(dataset) };
      const sql = this.reads.batchSql(dataset.at, statement.query, reads);
      return { definition: { type: "view", name: dataset.name, sql }, reads };
    }
    if (statement.kind === "materialized_view") {
      let sql = this.reads.batchSql(dataset.at, statement.query!, reads);
      sql = withDeclaredColumns(sql, statement.columns);
      return {
        definition: {
          type: "materialized_view",
          name: dataset.name,
          sql,
          ...tableFields(statement),
        },
        reads,
      };
    }
    if (statement.kind !== "streaming_table") throw new Error("flows are attached, not defined");
    const flows: Record<string, unknown>[] = [];
    const flowsAt: StatementAt[] = [];
    const all = statement.query ? [dataset.at, ...dataset.flows] : dataset.flows;
    if (all.length === 0)
      throw new StatementProblem(
        statement.name.start,
        PROJECT_ISSUE_CODES.datasetWithoutFlow,
        `streaming table ${dataset.name} has no query and no flow writes it: add AS SELECT … FROM STREAM(…), or CREATE FLOW … AS INSERT INTO ${dataset.name} …`,
      );
    for (const at of all) {
      const flow = this.guard(at, () => this.flow(at, dataset.name, statement.columns));
      if (!flow) continue;
      for (const read of flow.reads) reads.add(read);
      flows.push(flow.definition);
      flowsAt.push(at);
    }
    return {
      definition: { type: "streaming_table", name: dataset.name, ...tableFields(statement), flows },
      flowsAt,
      reads,
    };
  }

  private flow(
    at: StatementAt,
    table: string,
    columns: readonly { name: string; type: string }[],
  ): { definition: Record<string, unknown>; reads: ReadonlySet<string> } {
    const { statement } = at;
    const name = statement.kind === "streaming_table" ? table : this.reads.ownName(statement.name);
    if (statement.kind === "auto_cdc_flow") return this.autoCdcFlow(at, statement, name);
    const query =
      statement.kind === "streaming_table" ? statement.query! : (statement as { query: QueryText }).query;
    const reading = this.reads.streamingQuery(at, query, `flow ${name}`);
    const definition: Record<string, unknown> = {
      name,
      source: reading.mapped.source,
      sql: withDeclaredColumns(reading.sql, columns),
      ...(Object.keys(reading.mapped.options).length > 0 ? { options: reading.mapped.options } : {}),
      ...(reading.watermark ? { watermark: reading.watermark } : {}),
    };
    return { definition, reads: reading.reads };
  }

  private autoCdcFlow(at: StatementAt, cdc: AutoCdcFlowStatement, name: string) {
    const scanned = scanQuery(cdc.from);
    let reading: FlowReading;
    if (scanned.streams.length === 0) {
      // `FROM x`: Databricks reads an AUTO CDC source as a stream either way.
      const table = scanned.tables[0];
      if (!table || scanned.tables.length > 1)
        throw new StatementProblem(
          cdc.from.start,
          PROJECT_ISSUE_CODES.syntaxError,
          "AUTO CDC reads FROM STREAM(<table>) or FROM STREAM read_files(…)",
        );
      reading = this.reads.streamOf(
        at,
        { start: table.name.start, end: table.end, read: { table: table.name } },
        cdc.from,
        `flow ${name}`,
      );
    } else {
      reading = this.reads.streamingQuery(at, cdc.from, `flow ${name}`);
    }
    if (reading.watermark)
      throw new StatementProblem(
        cdc.from.start,
        PROJECT_ISSUE_CODES.unsupportedClause,
        "WATERMARK does not apply to an AUTO CDC source (its events are ordered by SEQUENCE BY): remove it",
      );
    const autoCdc: Record<string, unknown> = {
      keys: cdc.keys,
      sequence_by: cdc.sequenceBy.length === 1 ? cdc.sequenceBy[0] : cdc.sequenceBy,
      stored_as_scd_type: cdc.scdType,
      ...(cdc.applyAsDeletes !== undefined ? { apply_as_deletes: cdc.applyAsDeletes } : {}),
      ...(cdc.applyAsTruncates !== undefined ? { apply_as_truncates: cdc.applyAsTruncates } : {}),
      ...(cdc.columnList ? { column_list: cdc.columnList } : {}),
      ...(cdc.exceptColumnList ? { except_column_list: cdc.exceptColumnList } : {}),
      ...(cdc.trackHistoryColumnList ? { track_history_column_list: cdc.trackHistoryColumnList } : {}),
      ...(cdc.trackHistoryExceptColumnList
        ? { track_history_except_column_list: cdc.trackHistoryExceptColumnList }
        : {}),
      ...(cdc.ignoreNullUpdates ? { ignore_null_updates: true } : {}),
    };
    const sql =
      reading.sql.trim() === "source" || /^source AS \S+$/.test(reading.sql.trim())
        ? "SELECT * FROM source"
        : `SELECT * FROM ${reading.sql}`;
    return {
      definition: {
        name,
        source: reading.mapped.source,
        sql,
        ...(Object.keys(reading.mapped.options).length > 0 ? { options: reading.mapped.options } : {}),
        auto_cdc: autoCdc,
      },
      reads: reading.reads,
    };
  }

  private cycleIssues(reads: ReadonlyMap<string, ReadonlySet<string>>): void {
    for (const cycle of readCycles(reads)) {
      for (const member of new Set(cycle)) {
        const at = this.defined.get(member.toLowerCase())!.at;
        this.issue(
          at,
          at.statement.name.start,
          PROJECT_ISSUE_CODES.dependencyCycle,
          `${member} is part of a cycle (${cycle.join(" → ")}): datasets must not read each other in a circle; remove one of the reads`,
        );
      }
    }
  }

  private guard<T>(at: StatementAt, run: () => T): T | undefined {
    try {
      return run();
    } catch (error) {
      if (!(error instanceof StatementProblem)) throw error;
      this.issue(at, error.offset, error.code, error.message);
      return undefined;
    }
  }

  private issue(at: StatementAt, offset: number, code: ProjectIssueCode, message: string): void {
    this.issues.push({ ...at.source.locate(offset), code, message });
  }
}

function tableFields(
  statement: Extract<PipelineStatement, { kind: "streaming_table" | "materialized_view" }>,
) {
  return {
    ...(statement.partitionBy ? { partition_by: statement.partitionBy } : {}),
    ...(Object.keys(statement.properties).length > 0 ? { properties: statement.properties } : {}),
    ...(statement.expectations.length > 0
      ? {
          expectations: statement.expectations.map((e) => ({
            name: e.name,
            condition: e.condition,
            ...(e.onViolation !== "warn" ? { on_violation: e.onViolation } : {}),
          })),
        }
      : {}),
  };
}
