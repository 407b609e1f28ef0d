import { PROJECT_ISSUE_CODES, StatementProblem } from "./errors.ts";
import { isSymbol, isWord, type Token } from "./sql-tokens.ts";
import type { NameRef, QueryText } from "./statements.ts";

/**
 * What a query reads, found from its tokens: the streams (`STREAM(x)`, `STREAM x`,
 * `STREAM read_files(…)`, each with its `WATERMARK … DELAY OF …` and alias) and the tables read in
 * full (a name after FROM, JOIN or a comma of a FROM list, that is not a CTE). Each carries its offsets,
 * so the query's text can be rewritten around it.
 */

/** A function call as a source: `read_files('s3://…', format => 'json')`. */
export interface SourceCall {
  readonly name: string;
  readonly start: number;
  readonly positional: readonly ArgumentValue[];
  readonly named: Readonly<Record<string, ArgumentValue>>;
}

export interface ArgumentValue {
  /** A string literal's value, or a number's or word's text. */
  readonly value: string;
  readonly kind: Token["kind"];
  readonly start: number;
}

export interface StreamRead {
  /** The text `[start, end)` the read covers, from STREAM to its alias. */
  readonly start: number;
  readonly end: number;
  readonly read: { readonly table: NameRef } | { readonly call: SourceCall };
  readonly watermark?: { readonly column: string; readonly delay: string; readonly start: number };
  readonly alias?: string;
}

export interface TableRead {
  readonly name: NameRef;
  readonly end: number;
}

export interface QueryReads {
  readonly streams: readonly StreamRead[];
  readonly tables: readonly TableRead[];
}

/** Words that end a table reference, so they are never taken for its alias. */
const NOT_AN_ALIAS = new Set(
  (
    "WHERE GROUP ORDER HAVING LIMIT UNION INTERSECT EXCEPT MINUS JOIN INNER LEFT RIGHT FULL OUTER CROSS " +
    "NATURAL SEMI ANTI ON USING WINDOW WATERMARK LATERAL PIVOT UNPIVOT TABLESAMPLE CLUSTER DISTRIBUTE SORT " +
    "QUALIFY KEYS IGNORE APPLY SEQUENCE COLUMNS STORED TRACK SELECT FROM"
  ).split(" "),
);

export function scanQuery(query: QueryText): QueryReads {
  const tokens = query.tokens;
  const ctes = cteNames(tokens);
  const streams: StreamRead[] = [];
  const tables: TableRead[] = [];
  let i = 0;
  /** After FROM or JOIN, or a comma of a FROM list at the same depth. */
  let expectTable = false;
  let fromDepth = -1;
  let depth = 0;
  while (i < tokens.length) {
    const token = tokens[i]!;
    if (isWord(token, "STREAM") && startsRead(tokens[i + 1])) {
      const read = streamRead(tokens, i);
      streams.push(read.read);
      i = read.next;
      expectTable = false;
      continue;
    }
    if (isSymbol(token, "(")) depth++;
    else if (isSymbol(token, ")")) {
      depth--;
      if (depth < fromDepth) fromDepth = -1;
    }
    if (isWord(token, "FROM", "JOIN")) {
      expectTable = true;
      fromDepth = depth;
      i++;
      continue;
    }
    if (isSymbol(token, ",") && depth === fromDepth) {
      expectTable = true;
      i++;
      continue;
    }
    if (
      isWord(token, "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "SELECT", "ON", "USING", "WINDOW") &&
      depth === fromDepth
    )
      fromDepth = -1;
    if (expectTable && (token.kind === "word" || token.kind === "quoted") && !isSymbol(tokens[i + 1], "(")) {
      const name = readName(tokens, i);
      const single = name.parts.length === 1 ? name.parts[0]!.toLowerCase() : undefined;
      if (!(single !== undefined && ctes.has(single)) && !isWord(token, "LATERAL", "VALUES"))
        tables.push({ name, end: tokens[name.last]!.end });
      i = name.last + 1;
      expectTable = false;
      continue;
    }
    expectTable = false;
    i++;
  }
  return { streams, tables };
}

function startsRead(token: Token | undefined): boolean {
  return token !== undefined && (isSymbol(token, "(") || token.kind === "word" || token.kind === "quoted");
}

/** `STREAM(x)`, `STREAM x`, `STREAM(read_files(…))`, `STREAM read_files(…)`, then WATERMARK and alias. */
function streamRead(tokens: readonly Token[], at: number): { read: StreamRead; next: number } {
  let i = at + 1;
  const parenthesized = isSymbol(tokens[i], "(");
  if (parenthesized) i++;
  const first = tokens[i];
  if (first === undefined || (first.kind !== "word" && first.kind !== "quoted"))
    throw new StatementProblem(
      first?.start ?? tokens[at]!.end,
      PROJECT_ISSUE_CODES.syntaxError,
      "STREAM reads a table or a source function: STREAM(<table>) or STREAM read_files(…)",
    );
  let read: StreamRead["read"];
  if (isSymbol(tokens[i + 1], "(")) {
    const call = sourceCall(tokens, i);
    read = { call: call.call };
    i = call.next;
  } else {
    const name = readName(tokens, i);
    read = { table: name };
    i = name.last + 1;
  }
  if (parenthesized) {
    if (!isSymbol(tokens[i], ")"))
      throw new StatementProblem(
        tokens[i]?.start ?? tokens[i - 1]!.end,
        PROJECT_ISSUE_CODES.syntaxError,
        "STREAM( … ) is not closed with )",
      );
    i++;
  }
  let watermark: StreamRead["watermark"];
  if (isWord(tokens[i], "WATERMARK")) {
    const start = tokens[i]!.start;
    const column = tokens[i + 1];
    if (
      !column ||
      (column.kind !== "word" && column.kind !== "quoted") ||
      !isWord(tokens[i + 2], "DELAY") ||
      !isWord(tokens[i + 3], "OF")
    )
      throw new StatementProblem(
        start,
        PROJECT_ISSUE_CODES.syntaxError,
        "write WATERMARK <column> DELAY OF INTERVAL <n> <unit>",
      );
    i += 4;
    if (isWord(tokens[i], "INTERVAL")) i++;
    const parts: string[] = [];
    while (
      tokens[i] &&
      (tokens[i]!.kind === "number" || tokens[i]!.kind === "string" || isWord(tokens[i], ...UNITS))
    ) {
      parts.push(tokens[i]!.value);
      i++;
    }
    watermark = { column: column.value, delay: parts.join(" ").toLowerCase(), start };
  }
  let alias: string | undefined;
  if (isWord(tokens[i], "AS")) {
    alias = tokens[i + 1]?.value;
    i += 2;
  } else if (
    (tokens[i]?.kind === "word" && !NOT_AN_ALIAS.has(tokens[i]!.value.toUpperCase())) ||
    tokens[i]?.kind === "quoted"
  ) {
    alias = tokens[i]!.value;
    i++;
  }
  const end = tokens[i - 1]!.end;
  return {
    read: {
      start: tokens[at]!.start,
      end,
      read,
      ...(watermark ? { watermark } : {}),
      ...(alias !== undefined ? { alias } : {}),
    },
    next: i,
  };
}

const UNITS = [
  "MILLISECOND",
  "MILLISECONDS",
  "SECOND",
  "SECONDS",
  "MINUTE",
  "MINUTES",
  "HOUR",
  "HOURS",
  "DAY",
  "DAYS",
  "WEEK",
  "WEEKS",
];

/** `name(arg, key => value, …)`: literal arguments only, as the source functions take them. */
function sourceCall(tokens: readonly Token[], at: number): { call: SourceCall; next: number } {
  const name = tokens[at]!;
  let i = at + 2;
  const positional: ArgumentValue[] = [];
  const named: Record<string, ArgumentValue> = {};
  while (!isSymbol(tokens[i], ")")) {
    const token = tokens[i];
    if (token === undefined)
      throw new StatementProblem(
        name.start,
        PROJECT_ISSUE_CODES.syntaxError,
        `${name.value}( … ) is not closed with )`,
      );
    if ((token.kind === "word" || token.kind === "quoted") && isSymbol(tokens[i + 1], "=>")) {
      const value = literal(tokens, i + 2, name.value);
      named[token.value] = value;
      i += 3;
    } else {
      positional.push(literal(tokens, i, name.value));
      i++;
    }
    if (isSymbol(tokens[i], ",")) i++;
    else if (!isSymbol(tokens[i], ")"))
      throw new StatementProblem(
        tokens[i]?.start ?? name.start,
        PROJECT_ISSUE_CODES.syntaxError,
        `expected "," or ")" in ${name.value}( … )`,
      );
  }
  return { call: { name: name.value, start: name.start, positional, named }, next: i + 1 };
}

function literal(tokens: readonly Token[], i: number, fn: string): ArgumentValue {
  const token = tokens[i];
  if (token === undefined || token.kind === "symbol" || token.kind === "quoted")
    throw new StatementProblem(
      token?.start ?? tokens[i - 1]!.end,
      PROJECT_ISSUE_CODES.unsupportedClause,
      `the arguments of ${fn} are literals ('text', numbers, true/false): compute anything else in the query`,
    );
  return { value: token.value, kind: token.kind, start: token.start };
}

/** A dotted name from `at`; `last` is the index of its final part. */
function readName(tokens: readonly Token[], at: number): NameRef & { last: number } {
  const parts = [tokens[at]!.value];
  let last = at;
  while (
    isSymbol(tokens[last + 1], ".") &&
    (tokens[last + 2]?.kind === "word" || tokens[last + 2]?.kind === "quoted")
  ) {
    parts.push(tokens[last + 2]!.value);
    last += 2;
  }
  return { parts, start: tokens[at]!.start, last };
}

/** `WITH a AS (…), b AS (…)`: names a FROM may read that are not tables. */
function cteNames(tokens: readonly Token[]): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i + 2 < tokens.length; i++) {
    const before = tokens[i - 1];
    if (
      (isWord(before, "WITH", "RECURSIVE") || isSymbol(before, ",")) &&
      isWord(tokens[i + 1], "AS") &&
      isSymbol(tokens[i + 2], "(")
    )
      names.add(tokens[i]!.value.toLowerCase());
  }
  return names;
}
