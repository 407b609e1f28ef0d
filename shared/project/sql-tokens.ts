/**
 * Spark SQL's tokens, enough to read the statements' envelope (CREATE …, CONSTRAINT, KEYS, …) and to
 * find a query's table references; the query itself stays text. Comments are skipped; each token keeps
 * its offsets so a message can point at it and a rewrite can splice the text around it.
 */

export type TokenKind = "word" | "quoted" | "string" | "number" | "symbol";

export interface Token {
  readonly kind: TokenKind;
  /** A word as written; a quoted identifier or string without its quotes and escapes. */
  readonly value: string;
  readonly start: number;
  readonly end: number;
}

export type TokenizeResult =
  | { readonly ok: true; readonly tokens: readonly Token[] }
  | { readonly ok: false; readonly offset: number; readonly message: string };

/** Two-character operators first, so `=>` is one symbol and not `=` then `>`. */
const SYMBOLS = ["=>", "<=", ">=", "<>", "!=", "==", "||", "::", "->"];
const WORD_START = /[A-Za-z_]/;
const WORD_PART = /[A-Za-z0-9_$]/;
const DIGIT = /[0-9]/;

export function tokenize(text: string): TokenizeResult {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (text.startsWith("--", i)) {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end + 1;
    } else if (text.startsWith("/*", i)) {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) return { ok: false, offset: i, message: "a /* comment is never closed with */" };
      i = end + 2;
    } else if (c === "'" || c === '"' || c === "`") {
      const quoted = readQuoted(text, i, c);
      if (!quoted) {
        const what = c === "`" ? "a `quoted identifier`" : "a string";
        return { ok: false, offset: i, message: `${what} is never closed with ${c}` };
      }
      tokens.push({ kind: c === "`" ? "quoted" : "string", value: quoted.value, start: i, end: quoted.end });
      i = quoted.end;
    } else if (DIGIT.test(c) || (c === "." && DIGIT.test(text[i + 1] ?? ""))) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE_A-Za-z]/.test(text[j]!)) j++;
      tokens.push({ kind: "number", value: text.slice(i, j), start: i, end: j });
      i = j;
    } else if (WORD_START.test(c)) {
      let j = i + 1;
      while (j < text.length && WORD_PART.test(text[j]!)) j++;
      tokens.push({ kind: "word", value: text.slice(i, j), start: i, end: j });
      i = j;
    } else {
      const symbol = SYMBOLS.find((s) => text.startsWith(s, i)) ?? c;
      tokens.push({ kind: "symbol", value: symbol, start: i, end: i + symbol.length });
      i += symbol.length;
    }
  }
  return { ok: true, tokens };
}

/** A quoted run: Spark's backslash escapes in strings, a doubled quote in all three kinds. */
function readQuoted(text: string, start: number, quote: string): { value: string; end: number } | undefined {
  let value = "";
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "\\" && quote !== "`" && i + 1 < text.length) {
      value += unescape(text[i + 1]!);
      i += 2;
    } else if (c === quote) {
      if (text[i + 1] === quote) {
        value += quote;
        i += 2;
      } else {
        return { value, end: i + 1 };
      }
    } else {
      value += c;
      i++;
    }
  }
  return undefined;
}

function unescape(c: string): string {
  return ({ n: "\n", t: "\t", r: "\r", "0": "\0" } as Record<string, string>)[c] ?? c;
}

/** Whether a token is the keyword `word` (any case; a quoted identifier never is). */
export function isWord(token: Token | undefined, ...words: string[]): boolean {
  return token?.kind === "word" && words.some((w) => w.toUpperCase() === token.value.toUpperCase());
}

export function isSymbol(token: Token | undefined, symbol: string): boolean {
  return token?.kind === "symbol" && token.value === symbol;
}

/** Statements of a file: the tokens between `;`s (a trailing `;` is optional; empty statements drop). */
export function splitStatements(tokens: readonly Token[]): Token[][] {
  const statements: Token[][] = [];
  let current: Token[] = [];
  for (const token of tokens) {
    if (isSymbol(token, ";")) {
      if (current.length > 0) statements.push(current);
      current = [];
    } else {
      current.push(token);
    }
  }
  if (current.length > 0) statements.push(current);
  return statements;
}
