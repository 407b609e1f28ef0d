import {
  PROJECT_ISSUE_CODES,
  formatLocation,
  type ProjectIssue,
  type ProjectIssueCode,
  type ProjectLocation,
  StatementProblem,
} from "./errors.ts";
import { scanQuery, type StreamRead, type TableRead } from "./query-scan.ts";
import {
  deltaPathSource,
  filePathSource,
  FILE_FORMATS,
  sourceOfCall,
  type MappedSource,
} from "./source-functions.ts";
import { readCycles } from "./dependency-cycles.ts";
import { splice, withDeclaredColumns, type Splice } from "./query-splice.ts";
import type { SourceText } from "./source-text.ts";
import type { AutoCdcFlowStatement, NameRef, PipelineStatement, QueryText } from "./statements.ts";

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

interface Defined {
  readonly name: string;
  readonly at: StatementAt;
  readonly flows: StatementAt[];
}

/** A flow's reading, after resolving its stream: the source, options and SQL over `source`. */
interface FlowReading {
  readonly mapped: MappedSource;
  readonly sql: string;
  readonly watermark?: { column: string; delay: string };
  /** Datasets read (streamed or in full), for the cycle check. */
  readonly reads: ReadonlySet<string>;
}

export function buildDataflowGraph(statements: readonly StatementAt[], settings: GraphSettings): BuiltGraph {
  return new GraphBuilder(statements, settings).build();
}

class GraphBuilder {
  private readonly issues: ProjectIssue[] = [];
  private readonly defined = new Map<string, Defined>();
  private readonly flowNames = new Map<string, StatementAt>();
  /** Streaming views being inlined, so a view that streams from itself is a cycle, not a stack overflow. */
  private readonly inlining = new Set<string>();

  constructor(
    private readonly statements: readonly StatementAt[],
    private readonly settings: GraphSettings,
  ) {}

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
    const name = this.guard(at, () => this.ownName(statement.name));
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
      const name = this.ownName(statement.name);
      const first = this.flowNames.get(name.toLowerCase());
      if (first) {
        throw new StatementProblem(
          statement.name.start,
          PROJECT_ISSUE_CODES.duplicateDefinition,
          `flow ${name} is already defined at ${formatLocation(first.source.locate(first.statement.name.start))}: flow names are unique in a project`,
        );
      }
      this.flowNames.set(name.toLowerCase(), at);
      const targetName = this.ownName(statement.target);
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
      if (this.streamsIn(statement.query)) return { reads: this.streamingViewReads(dataset) };
      const sql = this.batchSql(dataset.at, statement.query, reads);
      return { definition: { type: "view", name: dataset.name, sql }, reads };
    }
    if (statement.kind === "materialized_view") {
      let sql = this.batchSql(dataset.at, statement.query!, reads);
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
    const name = statement.kind === "streaming_table" ? table : this.ownName(statement.name);
    if (statement.kind === "auto_cdc_flow") return this.autoCdcFlow(at, statement, name);
    const query =
      statement.kind === "streaming_table" ? statement.query! : (statement as { query: QueryText }).query;
    const reading = this.streamingQuery(at, query, `flow ${name}`);
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
      reading = this.streamOf(
        at,
        { start: table.name.start, end: table.end, read: { table: table.name } },
        cdc.from,
        `flow ${name}`,
      );
    } else {
      reading = this.streamingQuery(at, cdc.from, `flow ${name}`);
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

  /** A query that must read exactly one stream: its source, and its text over `source`. */
  private streamingQuery(at: StatementAt, query: QueryText, what: string): FlowReading {
    const scanned = scanQuery(query);
    if (scanned.streams.length === 0)
      throw new StatementProblem(
        query.start,
        PROJECT_ISSUE_CODES.unsupportedClause,
        `${what} reads no stream: a streaming table's query reads its source with STREAM(<table>) or STREAM read_files(…); for a batch query use CREATE MATERIALIZED VIEW`,
      );
    if (scanned.streams.length > 1)
      throw new StatementProblem(
        scanned.streams[1]!.start,
        PROJECT_ISSUE_CODES.unsupportedClause,
        `${what} reads two streams (a stream-stream join or a UNION of streams): write one flow per stream (CREATE FLOW … INSERT INTO), or the join in Ebb's YAML (join:)`,
      );
    return this.streamOf(at, scanned.streams[0]!, query, what, scanned.tables);
  }

  private streamOf(
    at: StatementAt,
    stream: StreamRead,
    query: QueryText,
    what: string,
    tables: readonly TableRead[] = [],
  ): FlowReading {
    const reads = new Set<string>();
    let replacement: string;
    let mapped: MappedSource;
    let watermark = stream.watermark
      ? { column: stream.watermark.column, delay: stream.watermark.delay }
      : undefined;
    if ("call" in stream.read) {
      mapped = sourceOfCall(stream.read.call);
      replacement = stream.alias !== undefined ? `source AS ${stream.alias}` : "source";
    } else {
      const ref = stream.read.table;
      const prefix = ref.parts.length === 2 ? ref.parts[0]!.toLowerCase() : undefined;
      if (prefix === "delta" || FILE_FORMATS.some((format) => format === prefix)) {
        mapped = prefix === "delta" ? deltaPathSource(ref.parts[1]!) : filePathSource(prefix!, ref.parts[1]!);
        replacement = stream.alias !== undefined ? `source AS ${stream.alias}` : "source";
      } else {
        const name = this.readName(ref, what);
        const target = this.defined.get(name.toLowerCase())!;
        reads.add(target.name);
        const alias = stream.alias ?? ref.parts[ref.parts.length - 1]!;
        if (target.at.statement.kind === "view") {
          const inner = this.inlineView(target, ref);
          mapped = inner.mapped;
          for (const r of inner.reads) reads.add(r);
          watermark ??= inner.watermark;
          // A view that passes its stream through unchanged needs no subquery (Ebb's analyses read it as is).
          replacement = /^SELECT \* FROM source(?: AS \w+)?$/i.test(inner.sql.trim())
            ? `source AS ${alias}`
            : `(${inner.sql}) AS ${alias}`;
        } else if (target.at.statement.kind === "materialized_view") {
          throw new StatementProblem(
            ref.start,
            PROJECT_ISSUE_CODES.unsupportedClause,
            `${what} streams from ${target.name}, a materialized view: a stream reads a streaming table (or a source); read ${target.name} without STREAM in a materialized view instead`,
          );
        } else {
          mapped = { source: { type: "stream", dataset: target.name }, options: {} };
          replacement = alias === "source" ? "source" : `source AS ${alias}`;
        }
      }
    }
    const splices: Splice[] = [{ start: stream.start, end: stream.end, text: replacement }];
    for (const table of tables) splices.push(this.tableSplice(table, what, reads));
    return {
      mapped,
      sql: splice(at.source.text, query, splices),
      ...(watermark ? { watermark } : {}),
      reads,
    };
  }

  /** A temporary view that streams: its reading, to be spliced in where it is streamed from. */
  private inlineView(view: Defined, ref: NameRef): FlowReading {
    if (this.inlining.has(view.name))
      throw new StatementProblem(
        ref.start,
        PROJECT_ISSUE_CODES.dependencyCycle,
        `view ${view.name} streams from itself`,
      );
    const statement = view.at.statement as { query: QueryText };
    if (!this.streamsIn(statement.query))
      throw new StatementProblem(
        ref.start,
        PROJECT_ISSUE_CODES.unsupportedClause,
        `STREAM(${view.name}) reads a view with a batch query: read it without STREAM, or make its query read STREAM(…)`,
      );
    this.inlining.add(view.name);
    try {
      return this.streamingQuery(view.at, statement.query, `view ${view.name}`);
    } finally {
      this.inlining.delete(view.name);
    }
  }

  private streamingViewReads(view: Defined): ReadonlySet<string> {
    return this.inlineView(view, view.at.statement.name).reads;
  }

  private streamsIn(query: QueryText): boolean {
    return scanQuery(query).streams.length > 0;
  }

  /** A batch query (materialized view, view): every read resolved, none a stream. */
  private batchSql(at: StatementAt, query: QueryText, reads: Set<string>): string {
    const scanned = scanQuery(query);
    if (scanned.streams.length > 0)
      throw new StatementProblem(
        scanned.streams[0]!.start,
        PROJECT_ISSUE_CODES.unsupportedClause,
        "a materialized view or view reads its tables in full, not as a stream: remove STREAM(…) (or define a streaming table)",
      );
    const splices = scanned.tables.map((table) => this.tableSplice(table, "the query", reads));
    return splice(at.source.text, query, splices);
  }

  /** A table read in full: a dataset of the project, written by its bare name. */
  private tableSplice(table: TableRead, what: string, reads: Set<string>): Splice {
    const name = this.readName(table.name, what);
    const target = this.defined.get(name.toLowerCase())!;
    if (
      target.at.statement.kind === "view" &&
      this.streamsIn((target.at.statement as { query: QueryText }).query)
    )
      throw new StatementProblem(
        table.name.start,
        PROJECT_ISSUE_CODES.unsupportedClause,
        `view ${target.name} reads a stream: read it with STREAM(${target.name})`,
      );
    reads.add(target.name);
    return { start: table.name.start, end: table.end, text: target.name };
  }

  /** A name read by a query, resolved to a dataset of the project. */
  private readName(ref: NameRef, what: string): string {
    const name = this.ownName(ref, true);
    if (!this.defined.has(name.toLowerCase()))
      throw new StatementProblem(
        ref.start,
        PROJECT_ISSUE_CODES.unknownDataset,
        `${what} reads ${ref.parts.join(".")}, which no file of the project defines: define it (CREATE STREAMING TABLE / MATERIALIZED VIEW / TEMPORARY VIEW), or read an external Delta table as delta.\`<path>\``,
      );
    return name;
  }

  /** `x`, `LIVE.x`, `<schema>.x`, `<catalog>.<schema>.x` → `x`; any other qualifier is not the pipeline's. */
  private ownName(ref: NameRef, reading = false): string {
    const parts = ref.parts;
    const last = parts[parts.length - 1]!;
    const qualifiers = parts.slice(0, -1).map((p) => p.toLowerCase());
    const own = [this.settings.catalog, this.settings.schema].map((p) => p?.toLowerCase());
    const ok =
      qualifiers.length === 0 ||
      (qualifiers.length === 1 && (qualifiers[0] === "live" || qualifiers[0] === own[1])) ||
      (qualifiers.length === 2 && qualifiers[0] === own[0] && qualifiers[1] === own[1]);
    if (!ok)
      throw new StatementProblem(
        ref.start,
        reading ? PROJECT_ISSUE_CODES.unknownDataset : PROJECT_ISSUE_CODES.unsupportedClause,
        `${parts.join(".")} is outside the pipeline's catalog and schema (${this.settings.catalog ?? "?"}.${this.settings.schema ?? "?"}): Ebb ${reading ? "reads the project's own datasets (and delta.`<path>`)" : "writes a pipeline's datasets into its own schema"}; write ${last}`,
      );
    // Spark's names are case-insensitive and its catalogs keep them in lower case, as Ebb's do.
    return last.toLowerCase();
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
