import { PROJECT_ISSUE_CODES, StatementProblem } from "./errors.ts";
import { scanQuery, type StreamRead, type TableRead } from "./query-scan.ts";
import {
  deltaPathSource,
  filePathSource,
  FILE_FORMATS,
  sourceOfCall,
  type MappedSource,
} from "./source-functions.ts";
import { splice, type Splice } from "./query-splice.ts";
import type { NameRef, QueryText } from "./statements.ts";
import type { GraphSettings, StatementAt } from "./dataflow-graph.ts";

export interface Defined {
  readonly name: string;
  readonly at: StatementAt;
  readonly flows: StatementAt[];
}

/** A flow's reading, after resolving its stream: the source, options and SQL over `source`. */
export interface FlowReading {
  readonly mapped: MappedSource;
  readonly sql: string;
  readonly watermark?: { column: string; delay: string };
  /** Datasets read (streamed or in full), for the cycle check. */
  readonly reads: ReadonlySet<string>;
}

/**
 * Resolves what a flow's query reads against the datasets the project defines: its one stream (a
 * dataset, a source function, or a temporary view inlined where it is streamed from) and the
 * tables it reads in full, as SQL over `source` and the names the graph's cycle check needs.
 */
export class QueryReadResolver {
  /** Streaming views being inlined, so a view that streams from itself is a cycle, not a stack overflow. */
  private readonly inlining = new Set<string>();

  constructor(
    private readonly defined: ReadonlyMap<string, Defined>,
    private readonly settings: GraphSettings,
  ) {}

  /** A query that must read exactly one stream: its source, and its text over `source`. */
  streamingQuery(at: StatementAt, query: QueryText, what: string): FlowReading {
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

  streamOf(
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

  streamingViewReads(view: Defined): ReadonlySet<string> {
    return this.inlineView(view, view.at.statement.name).reads;
  }

  streamsIn(query: QueryText): boolean {
    return scanQuery(query).streams.length > 0;
  }

  /** A batch query (materialized view, view): every read resolved, none a stream. */
  batchSql(at: StatementAt, query: QueryText, reads: Set<string>): string {
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
  ownName(ref: NameRef, reading = false): string {
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
}
