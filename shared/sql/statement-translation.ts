import { SqlNotSupportedError } from "./errors.ts";
import { sparkToDuckDb } from "./spark-to-duckdb.ts";
import {
  isSymbol,
  isWord,
  significant,
  sparkStringLiteral,
  tokenize,
  type Token,
} from "./spark-sql-tokens.ts";
import { timeTravelAt } from "./time-travel-clause.ts";

/**
 * A statement of the SQL statements API (api.md "SQL statements") → the DuckDB SQL the sandbox runs,
 * pure, in two steps:
 *
 * 1. What only a statement names, over its Spark tokens: `event_log('<id>')`,
 *    `table_changes('<table>', from[, to])`, `DESCRIBE HISTORY <table>` and
 *    `FROM catalog.schema.table` (with Delta's time travel: `VERSION AS OF 3`, `TIMESTAMP AS OF '…'`,
 *    `@v3`; time-travel-clause.ts) become relations named in `sources`, which the caller loads into
 *    the sandbox before the query runs; parameter markers take their values; `current_timestamp()`
 *    is the statement's start, fixed for the whole statement as in Spark.
 * 2. The Spark SQL dialect, the one translator every user query goes through (spark-to-duckdb.ts):
 *    a construct it cannot run with Spark's answer is refused (`UNSUPPORTED_SQL`).
 */

export interface TranslationContext {
  /** Epoch ms the statement runs at. */
  readonly now: number;
  /** The defaults for names with fewer than three parts (the request's `catalog` and `schema`). */
  readonly catalog?: string | undefined;
  readonly schema?: string | undefined;
  /** Named parameter markers (`:day`), each as DuckDB SQL (a typed literal). */
  readonly parameters?: ReadonlyMap<string, string>;
}

export type StatementSource =
  | { readonly kind: "event_log"; readonly relation: string; readonly pipelineId: string }
  | {
      readonly kind: "table_changes";
      readonly relation: string;
      readonly table: string;
      readonly startingVersion: number;
      readonly endingVersion?: number;
    }
  | { readonly kind: "history"; readonly relation: string; readonly table: string }
  | {
      readonly kind: "table";
      readonly relation: string;
      readonly table: string;
      /** Time travel (`VERSION AS OF`, `TIMESTAMP AS OF`, `@v…`): the version, or a timestamp to resolve. */
      readonly version?: number;
      readonly timestamp?: string;
    };

export interface TranslatedStatement {
  readonly sql: string;
  readonly sources: readonly StatementSource[];
}

/** The relation names sources get; a statement's own names cannot start so (they are refused). */
const RELATION_PREFIX = "__ebb_source_";

type SourceRequest = DistributiveOmit<StatementSource, "relation">;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export function translateStatement(statement: string, context: TranslationContext): TranslatedStatement {
  const tokens = tokenize(statement);
  while (tokens.length > 0 && (!significant(tokens.at(-1)!) || isSymbol(tokens.at(-1), ";"))) tokens.pop();
  const first = tokens.find(significant);
  if (first === undefined) throw new SqlNotSupportedError("the statement is empty");
  const keyword = first.kind === "word" ? first.value.toUpperCase() : first.value;
  if (!["SELECT", "WITH", "VALUES", "DESCRIBE", "("].includes(keyword)) {
    throw new SqlNotSupportedError(`a ${keyword} statement cannot run here: only queries do`);
  }
  const translator = new Translator(tokens, context);
  const spark = translator.emit(0, tokens.length);
  const relations = translator.sources.map((source) => source.relation);
  return { sql: sparkToDuckDb(spark, { relations }), sources: translator.sources };
}

interface Argument {
  readonly sql: string;
  /** The argument's value when it is one string literal. */
  readonly literal?: string;
  /** The argument's value when it is one integer literal. */
  readonly integer?: number;
}

function timestampLiteral(ms: number): string {
  return `TIMESTAMP ${sparkStringLiteral(new Date(ms).toISOString().slice(0, 23).replace("T", " "))}`;
}

/** What is fixed at the statement's start, as in Spark: one instant for the whole statement. */
const STATEMENT_START: Readonly<Record<string, (context: TranslationContext) => string>> = {
  current_timestamp: (context) => timestampLiteral(context.now),
  now: (context) => timestampLiteral(context.now),
  current_date: (context) => `DATE ${sparkStringLiteral(new Date(context.now).toISOString().slice(0, 10))}`,
  unix_timestamp: (context) => String(Math.floor(context.now / 1000)),
};

/** Spark's niladic keywords, valid without parentheses. */
const NILADIC = new Set(["current_timestamp", "current_date"]);

class Translator {
  readonly sources: StatementSource[] = [];
  readonly #cteNames: ReadonlySet<string>;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly context: TranslationContext,
  ) {
    this.#cteNames = cteNames(tokens);
  }

  /** Tokens [from, to) as written. */
  emitAsWritten(from: number, to: number): string {
    return this.tokens
      .slice(from, to)
      .map((token) => token.text)
      .join("");
  }

  /** The Spark text of tokens [from, to), with what only a statement names resolved. */
  emit(from: number, to: number): string {
    let out = "";
    let i = from;
    while (i < to) {
      const [text, next] = this.#translateAt(i, to);
      out += text;
      i = next;
    }
    return out;
  }

  /** The translation of the construct starting at token `i`, and the index after it. */
  #translateAt(i: number, to: number): [string, number] {
    const token = this.tokens[i]!;
    switch (token.kind) {
      case "space":
      case "number":
        return [token.text, i + 1];
      case "string":
        return [token.text, i + 1];
      case "marker": {
        const value = this.context.parameters?.get(token.value);
        if (value === undefined) {
          throw new SqlNotSupportedError(
            `the statement's parameter marker :${token.value} has no value: send it in parameters`,
          );
        }
        return [value, i + 1];
      }
      case "symbol":
        return [token.text, i + 1];
      case "word":
      case "quoted":
        return this.#translateName(i, to);
    }
  }

  #translateName(i: number, to: number): [string, number] {
    const token = this.tokens[i]!;
    const upper = token.kind === "word" ? token.value.toUpperCase() : "";
    const afterName = this.#nextSignificant(i + 1, to);
    const callsFunction = token.kind === "word" && isSymbol(this.tokens[afterName], "(");

    if (upper === "DESCRIBE") return this.#describeHistory(i, to);
    if (token.kind === "word" && token.value.toLowerCase().startsWith(RELATION_PREFIX)) {
      throw new SqlNotSupportedError(`names starting ${RELATION_PREFIX} are Ebb's own`);
    }
    const lower = token.value.toLowerCase();
    if (callsFunction && (lower === "event_log" || lower === "table_changes")) {
      return this.#tableFunction(lower, afterName, to);
    }
    if (callsFunction && Object.hasOwn(STATEMENT_START, lower)) {
      const close = this.#matchingParen(afterName, to);
      if (this.tokens.slice(afterName + 1, close).every((t) => !significant(t)))
        return [STATEMENT_START[lower]!(this.context), close + 1];
    }
    if (token.kind === "word" && !callsFunction && NILADIC.has(lower)) {
      return [STATEMENT_START[lower]!(this.context), i + 1];
    }

    const { parts, end } = this.#dottedName(i, to);
    if (this.#followsFromOrJoin(i) && !isSymbol(this.tokens[this.#nextSignificant(end, to)], "(")) {
      const travel = timeTravelAt(this.tokens, end, to);
      const table = travel
        ? this.#requiredTableName(parts)
        : this.#tableName(parts, parts.length === 1 && this.#cteNames.has(lower));
      if (table !== undefined)
        return [this.#relation({ kind: "table", table, ...travel?.at }), travel?.end ?? end];
    }
    return [this.emitAsWritten(i, end), end];
  }

  /** `DESCRIBE HISTORY <table>`: the table's history, newest first. */
  #describeHistory(i: number, to: number): [string, number] {
    const history = this.#nextSignificant(i + 1, to);
    if (!isWord(this.tokens[history], "HISTORY")) {
      const what = this.tokens[history]?.value.toUpperCase() ?? "";
      throw new SqlNotSupportedError(`DESCRIBE ${what} is not supported: DESCRIBE HISTORY is`);
    }
    const nameAt = this.#nextSignificant(history + 1, to);
    const named = this.tokens[nameAt];
    if (named?.kind !== "word" && named?.kind !== "quoted") {
      throw new SqlNotSupportedError("DESCRIBE HISTORY needs a table name");
    }
    const { parts, end } = this.#dottedName(nameAt, to);
    const table = this.#requiredTableName(parts);
    return [`SELECT * FROM ${this.#relation({ kind: "history", table })} ORDER BY version DESC`, end];
  }

  /** `event_log('<pipeline-id>')`, `table_changes('<table>', from[, to])`. */
  #tableFunction(name: string, open: number, to: number): [string, number] {
    const close = this.#matchingParen(open, to);
    const args = this.#arguments(open + 1, close);
    if (name === "event_log") {
      const pipelineId = args.length === 1 ? args[0]!.literal : undefined;
      if (pipelineId === undefined) {
        throw new SqlNotSupportedError(
          "event_log takes one argument here, the pipeline id as a string: event_log('<pipeline-id>') (event_log(TABLE(…)) is not supported)",
        );
      }
      return [this.#relation({ kind: "event_log", pipelineId }), close + 1];
    }
    const tableName = args[0]?.literal;
    const [start, end] = [args[1]?.integer, args[2]?.integer];
    if (
      tableName === undefined ||
      start === undefined ||
      args.length > 3 ||
      (args.length === 3 && end === undefined)
    ) {
      throw new SqlNotSupportedError(
        "table_changes takes the table's name as a string and versions as whole numbers here: table_changes('catalog.schema.table', 1[, 5]) (timestamps are not supported)",
      );
    }
    const table = this.#requiredTableName(tableName.split("."));
    return [
      this.#relation({
        kind: "table_changes",
        table,
        startingVersion: start,
        ...(end !== undefined ? { endingVersion: end } : {}),
      }),
      close + 1,
    ];
  }

  /** A source's relation name: one per distinct source. */
  #relation(request: SourceRequest): string {
    const same = this.sources.find(
      (source) =>
        JSON.stringify({ ...source, relation: undefined }) ===
        JSON.stringify({ ...request, relation: undefined }),
    );
    if (same) return same.relation;
    const relation = `${RELATION_PREFIX}${this.sources.length + 1}`;
    this.sources.push({ ...request, relation } as StatementSource);
    return relation;
  }

  /**
   * `catalog.schema.table`, completing shorter names from the context. A one-part name that may be a
   * CTE or alias is left alone (undefined) unless the context names a schema; one that must be a table
   * without a context to complete it is refused.
   */
  #tableName(parts: readonly string[], isCte: boolean): string | undefined {
    const { catalog, schema } = this.context;
    if (parts.length === 3) return parts.join(".").toLowerCase();
    if (parts.length === 2 && catalog !== undefined) return [catalog, ...parts].join(".").toLowerCase();
    if (parts.length === 1 && !isCte && catalog !== undefined && schema !== undefined) {
      return [catalog, schema, parts[0]].join(".").toLowerCase();
    }
    return undefined;
  }

  /** A name that must be a table's (DESCRIBE HISTORY's, table_changes'). */
  #requiredTableName(parts: readonly string[]): string {
    const table = this.#tableName(parts, false);
    if (table === undefined) {
      throw new SqlNotSupportedError(
        `${JSON.stringify(parts.join("."))} is not a full table name: write catalog.schema.table, or send catalog and schema`,
      );
    }
    return table;
  }

  #dottedName(i: number, to: number): { parts: string[]; end: number } {
    const parts = [this.tokens[i]!.value];
    let end = i + 1;
    while (
      end + 1 < to &&
      isSymbol(this.tokens[end], ".") &&
      (this.tokens[end + 1]!.kind === "word" || this.tokens[end + 1]!.kind === "quoted")
    ) {
      parts.push(this.tokens[end + 1]!.value);
      end += 2;
    }
    return { parts, end };
  }

  #followsFromOrJoin(i: number): boolean {
    for (let j = i - 1; j >= 0; j--) {
      const token = this.tokens[j]!;
      if (!significant(token)) continue;
      return isWord(token, "FROM") || isWord(token, "JOIN");
    }
    return false;
  }

  #nextSignificant(i: number, to: number): number {
    let j = i;
    while (j < to && !significant(this.tokens[j]!)) j++;
    return j;
  }

  #matchingParen(open: number, to: number): number {
    let depth = 0;
    for (let j = open; j < to; j++) {
      if (isSymbol(this.tokens[j], "(")) depth++;
      else if (isSymbol(this.tokens[j], ")") && --depth === 0) return j;
    }
    throw new SqlNotSupportedError("a parenthesis is not closed");
  }

  /** The comma-separated arguments in tokens [from, to), each translated. */
  #arguments(from: number, to: number): Argument[] {
    const args: Argument[] = [];
    let start = from;
    let depth = 0;
    const flush = (end: number) => {
      const inner = this.tokens.slice(start, end).filter(significant);
      if (inner.length === 0 && args.length === 0 && end === to) return;
      const sql = this.emit(start, end).trim();
      const only = inner.length === 1 ? inner[0] : undefined;
      const negative = inner.length === 2 && isSymbol(inner[0], "-") ? inner[1] : undefined;
      const number =
        only?.kind === "number" ? only.value : negative?.kind === "number" ? `-${negative.value}` : undefined;
      args.push({
        sql,
        ...(only?.kind === "string" ? { literal: only.value } : {}),
        ...(number !== undefined && /^-?\d+$/.test(number) ? { integer: Number(number) } : {}),
      });
    };
    for (let j = from; j < to; j++) {
      const token = this.tokens[j]!;
      if (isSymbol(token, "(") || isSymbol(token, "[")) depth++;
      else if (isSymbol(token, ")") || isSymbol(token, "]")) depth--;
      else if (depth === 0 && isSymbol(token, ",")) {
        flush(j);
        start = j + 1;
      }
    }
    flush(to);
    return args;
  }
}

/** Names the statement defines with `WITH name AS (` or `, name AS (`. */
function cteNames(tokens: readonly Token[]): Set<string> {
  const meaningful = tokens.filter(significant);
  const names = new Set<string>();
  for (let i = 1; i + 2 < meaningful.length; i++) {
    const before = meaningful[i - 1];
    if (
      (isWord(before, "WITH") || isSymbol(before, ",")) &&
      (meaningful[i]!.kind === "word" || meaningful[i]!.kind === "quoted") &&
      isWord(meaningful[i + 1], "AS") &&
      isSymbol(meaningful[i + 2], "(")
    ) {
      names.add(meaningful[i]!.value.toLowerCase());
    }
  }
  return names;
}
