import { Dialect, transpile } from "@polyglot-sql/sdk";
import { ORDER_BY_ALL, PREFIX, rewriteDuckDbSql } from "./duckdb-tree-rewrite.ts";
import { SqlNotSupportedError, SqlUnsupportedError } from "./errors.ts";
import { MACROS, MacroRefusal, POST_PASS_ONLY } from "./spark-macros.ts";
import { KEYWORD_OR_FUNCTION, NOT_FUNCTIONS, SPARK_FUNCTIONS } from "./spark-functions.ts";
import { isSymbol, significant, tokenize, type Token } from "./spark-sql-tokens.ts";

/**
 * Spark SQL → DuckDB SQL with Spark's answers, in three passes (README "The SQL dialect"):
 *
 * 1. Ebb's pre-pass over the Spark tokens: every function called must be one Ebb runs
 *    (spark-functions.ts) or it is refused with its line and column (`UNSUPPORTED_SQL`); calls Ebb
 *    translates itself are renamed `__ebb_<name>` (spark-macros.ts); `try_cast` is marked (the
 *    transpiler reads every cast as non-ANSI); array subscripts become 1-based.
 * 2. polyglot-sql, sqlglot's Rust port, transpiles Spark to DuckDB (syntax, types, most functions).
 * 3. Ebb's post-pass over DuckDB's syntax tree (duckdb-tree-rewrite.ts): casts are ANSI again (an
 *    error on bad input, as in Spark 4), TIMESTAMP stays TIMESTAMP (the session is UTC), and the
 *    `__ebb_` calls expand.
 *
 * Pure and synchronous; a pipeline pays it once per definition version (at validation).
 */
export function sparkToDuckDb(statement: string, options: TranslationOptions = {}): string {
  let tokens: Token[];
  let prepared: string;
  try {
    tokens = tokenize(statement);
    prepared = prepare(tokens, new Set(options.relations ?? []));
  } catch (error) {
    // The tokenizer's refusals (a string or comment not closed) are the statement's, not Ebb's.
    if (!(error instanceof SqlNotSupportedError)) throw error;
    throw new SqlUnsupportedError(error.message.split(". ")[0]!, { line: 1, column: 1 });
  }
  const transpiled = transpile(prepared, Dialect.Spark, Dialect.DuckDB);
  if (!transpiled.success || transpiled.sql === undefined || transpiled.sql.length !== 1) {
    throw new SqlUnsupportedError(
      `the SQL does not parse as one Spark SQL statement: ${transpiled.error ?? ""}`,
      {
        line: transpiled.errorLine ?? 1,
        column: transpiled.errorColumn ?? 1,
      },
    );
  }
  try {
    return rewriteDuckDbSql(transpiled.sql[0]!);
  } catch (error) {
    if (error instanceof MacroRefusal) {
      throw new SqlUnsupportedError(`${error.reason}`, locate(tokens, error.functionName));
    }
    throw error;
  }
}

export interface TranslationOptions {
  /** Relations the caller named in the statement (the statements API's sources): Ebb's own names, let through. */
  readonly relations?: readonly string[];
}

/** A Spark boolean expression (a predicate, an `owns` condition) → DuckDB's. */
export function sparkConditionToDuckDb(condition: string): string {
  const prefix = "SELECT ";
  try {
    return sparkToDuckDb(`${prefix}${condition}`).replace(/^SELECT /, "");
  } catch (error) {
    if (!(error instanceof SqlUnsupportedError) || error.line !== 1) throw error;
    // Where it is in the condition as written, not in the SELECT it was wrapped in.
    const column = Math.max(1, error.column - prefix.length);
    throw new SqlUnsupportedError(error.message.replace(/^line \d+, column \d+: /, ""), { line: 1, column });
  }
}

/** Pass 1: the Spark text with Ebb's marks, or a refusal. */
function prepare(tokens: readonly Token[], relations: ReadonlySet<string>): string {
  const edits = new Map<number, { replace?: string; after?: string }>();
  const positions = offsets(tokens);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const at = () => position(tokens, positions[i]!);
    if (
      (token.kind === "word" || token.kind === "quoted") &&
      token.value.toLowerCase().startsWith(PREFIX) &&
      !relations.has(token.value)
    ) {
      throw new SqlUnsupportedError(`names starting ${PREFIX} are Ebb's own`, at());
    }
    if (token.kind === "word" && isSymbol(tokens[nextSignificant(tokens, i + 1)], "(")) {
      const name = token.value.toLowerCase();
      const before = tokens[previousSignificant(tokens, i - 1)];
      const inside = tokens[nextSignificant(tokens, nextSignificant(tokens, i + 1) + 1)];
      const keyword = ["SELECT", "WITH", "WHERE"].some((word) => isWordToken(inside, word));
      if (KEYWORD_OR_FUNCTION.has(name) ? keyword : NOT_FUNCTIONS.has(name)) continue;
      if (isWordToken(before, "AS") || isSymbol(before, ".")) continue;
      const isMacro = Object.hasOwn(MACROS, name) && !POST_PASS_ONLY.has(name);
      if (!SPARK_FUNCTIONS.has(name) && !isMacro) {
        throw new SqlUnsupportedError(
          `function ${name} is not a Spark function Ebb runs: check its name, or see docs/sql.md "The SQL dialect of a pipeline" for the functions Ebb runs and those it refuses`,
          at(),
        );
      }
      if (name === "try_cast") {
        const close = matchingParen(tokens, nextSignificant(tokens, i + 1));
        edits.set(i, { replace: `${PREFIX}try(CAST` });
        edits.set(close, { after: ")" });
      } else if (isMacro) {
        edits.set(i, { replace: `${PREFIX}${name}` });
      }
    }
    if (isOrderByAll(tokens, i)) edits.set(i, { replace: ORDER_BY_ALL });
    if (token.kind === "string" && /^(['"]).+\1\1.+\1$/s.test(token.text) && token.text.length > 2) {
      // Adjacent literals ('it''s'): one literal with their joined value, as Spark reads them.
      edits.set(i, { replace: `'${token.value.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'` });
    }
    if (isSymbol(token, "[") && isSubscript(tokens, i)) {
      const close = matchingBracket(tokens, i);
      const inner = tokens.slice(i + 1, close).filter(significant);
      if (!(inner.length === 1 && inner[0]!.kind === "string")) {
        edits.set(i, { replace: "[(" });
        edits.set(close, { replace: ") + 1]" });
      }
    }
  }
  return tokens
    .map((token, i) => {
      const edit = edits.get(i);
      return (edit?.replace ?? token.text) + (edit?.after ?? "");
    })
    .join("");
}

/** An unquoted ALL that is the whole of an ORDER BY (Spark 4: every output column, left to right). */
function isOrderByAll(tokens: readonly Token[], i: number): boolean {
  if (!isWordToken(tokens[i], "ALL")) return false;
  const by = previousSignificant(tokens, i - 1);
  if (!isWordToken(tokens[by], "BY") || !isWordToken(tokens[previousSignificant(tokens, by - 1)], "ORDER"))
    return false;
  const next = tokens[nextSignificant(tokens, i + 1)];
  return (
    next === undefined ||
    isSymbol(next, ")") ||
    isSymbol(next, ";") ||
    ["ASC", "DESC", "NULLS", "LIMIT", "OFFSET"].some((word) => isWordToken(next, word))
  );
}

/** `x[…]` after an operand, and not inside a `col:path` JSON path (whose subscripts are JSON's). */
function isSubscript(tokens: readonly Token[], open: number): boolean {
  let j = previousSignificant(tokens, open - 1);
  const operand = tokens[j];
  if (
    !operand ||
    !(
      operand.kind === "word" ||
      operand.kind === "quoted" ||
      isSymbol(operand, ")") ||
      isSymbol(operand, "]")
    )
  ) {
    return false;
  }
  // Walk back over `a.b[0].c` to see whether a `:` (a JSON path) starts the chain.
  while (j >= 0) {
    const token = tokens[j]!;
    if (!significant(token)) j--;
    else if (token.kind === "word" || token.kind === "quoted" || isSymbol(token, ".")) j--;
    else if (isSymbol(token, "]")) j = matchingOpenBracket(tokens, j) - 1;
    else return !isSymbol(token, ":");
  }
  return true;
}

function offsets(tokens: readonly Token[]): number[] {
  const out: number[] = [];
  let at = 0;
  for (const token of tokens) {
    out.push(at);
    at += token.text.length;
  }
  return out;
}

function position(tokens: readonly Token[], offset: number): { line: number; column: number } {
  const before = tokens
    .map((token) => token.text)
    .join("")
    .slice(0, offset);
  const lines = before.split("\n");
  return { line: lines.length, column: lines.at(-1)!.length + 1 };
}

/** Where the statement first calls `name` (for a refusal found after transpiling). */
function locate(tokens: readonly Token[], name: string): { line: number; column: number } {
  const positions = offsets(tokens);
  const index = tokens.findIndex((token) => token.kind === "word" && token.value.toLowerCase() === name);
  return position(tokens, index === -1 ? 0 : positions[index]!);
}

function nextSignificant(tokens: readonly Token[], i: number): number {
  let j = i;
  while (j < tokens.length && !significant(tokens[j]!)) j++;
  return j;
}

function previousSignificant(tokens: readonly Token[], i: number): number {
  let j = i;
  while (j >= 0 && !significant(tokens[j]!)) j--;
  return j;
}

function isWordToken(token: Token | undefined, word: string): boolean {
  return token?.kind === "word" && token.value.toUpperCase() === word;
}

function matchingParen(tokens: readonly Token[], open: number): number {
  return matching(tokens, open, "(", ")");
}

function matchingBracket(tokens: readonly Token[], open: number): number {
  return matching(tokens, open, "[", "]");
}

function matching(tokens: readonly Token[], open: number, opener: string, closer: string): number {
  let depth = 0;
  for (let j = open; j < tokens.length; j++) {
    if (isSymbol(tokens[j], opener)) depth++;
    else if (isSymbol(tokens[j], closer) && --depth === 0) return j;
  }
  throw new SqlNotSupportedError(`a ${opener} is not closed`);
}

function matchingOpenBracket(tokens: readonly Token[], close: number): number {
  let depth = 0;
  for (let j = close; j >= 0; j--) {
    if (isSymbol(tokens[j], "]")) depth++;
    else if (isSymbol(tokens[j], "[") && --depth === 0) return j;
  }
  return 0;
}
