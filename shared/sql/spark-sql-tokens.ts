import { SqlNotSupportedError } from "./errors.ts";

/**
 * Spark SQL text as tokens, for the translator: every character of the text belongs to exactly one
 * token, so untouched tokens re-join into the text they came from. Strings are decoded (Spark allows
 * `'…'` and `"…"` with backslash escapes), backtick identifiers unquoted.
 */

export type TokenKind =
  | "word" // identifier or keyword
  | "quoted" // `backtick identifier`
  | "string"
  | "number"
  | "symbol"
  | "space" // whitespace and comments
  | "marker"; // a :name parameter marker

export interface Token {
  readonly kind: TokenKind;
  /** The text as written. */
  readonly text: string;
  /** For `string` and `quoted`: the decoded value; for `marker`, the name; else the text. */
  readonly value: string;
}

const SPARK_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  "0": "\0",
  Z: "\x1a",
  "%": "\\%",
  _: "\\_",
};

const WORD = /[A-Za-z_][A-Za-z0-9_$]*/y;
const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?[A-Za-z]*/y;
const SPACE = /\s+/y;
const SYMBOLS = ["::", "<=>", "<=", ">=", "<>", "!=", "==", "||", "->", "=>"];

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  const match = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = at;
    return pattern.exec(text)?.[0];
  };
  const push = (kind: TokenKind, raw: string, value = raw) => {
    tokens.push({ kind, text: raw, value });
    at += raw.length;
  };
  while (at < text.length) {
    const char = text[at]!;
    const rest = text.slice(at, at + 3);
    const space = match(SPACE);
    if (space) push("space", space);
    else if (rest.startsWith("--")) {
      const end = text.indexOf("\n", at);
      push("space", text.slice(at, end === -1 ? text.length : end));
    } else if (rest.startsWith("/*")) {
      const end = text.indexOf("*/", at + 2);
      if (end === -1) throw new SqlNotSupportedError("a /* comment is not closed");
      push("space", text.slice(at, end + 2));
    } else if (char === "'" || char === '"') {
      const { raw, value } = readString(text, at);
      push("string", raw, value);
    } else if (char === "`") {
      let end = at + 1;
      let value = "";
      for (;;) {
        const close = text.indexOf("`", end);
        if (close === -1) throw new SqlNotSupportedError("a `quoted identifier` is not closed");
        value += text.slice(end, close);
        if (text[close + 1] === "`") {
          value += "`";
          end = close + 2;
        } else {
          end = close + 1;
          break;
        }
      }
      push("quoted", text.slice(at, end), value);
    } else if (char === ":" && text[at + 1] !== ":" && isMarkerStart(tokens)) {
      WORD.lastIndex = at + 1;
      const name = WORD.exec(text)?.[0];
      if (name === undefined) push("symbol", ":");
      else push("marker", ":" + name, name);
    } else {
      const word = match(WORD);
      const number = word === undefined ? match(NUMBER) : undefined;
      if (word !== undefined) push("word", word);
      else if (number !== undefined) push("number", number);
      else push("symbol", SYMBOLS.find((symbol) => text.startsWith(symbol, at)) ?? char);
    }
  }
  return tokens;
}

/**
 * A `:` starts a parameter marker where no operand precedes it (`= :day`, `(:a`); after a column it
 * is Databricks' JSON path operator (`details:rewind_summary`).
 */
function isMarkerStart(tokens: readonly Token[]): boolean {
  for (let i = tokens.length - 1; i >= 0; i--) {
    const token = tokens[i]!;
    if (token.kind === "space") continue;
    if (token.kind === "word") return OPERATOR_WORDS.has(token.value.toUpperCase());
    return token.kind === "symbol" && token.value !== ")" && token.value !== "]";
  }
  return true;
}

/** Keywords after which an operand (so a marker, not a path) follows. */
const OPERATOR_WORDS = new Set([
  "SELECT",
  "WHERE",
  "AND",
  "OR",
  "NOT",
  "ON",
  "WHEN",
  "THEN",
  "ELSE",
  "IN",
  "BETWEEN",
  "LIKE",
  "IS",
  "LIMIT",
  "HAVING",
  "BY",
  "AS",
  "INTERVAL",
  "CASE",
  "RETURN",
]);

function readString(text: string, start: number): { raw: string; value: string } {
  const quote = text[start]!;
  let value = "";
  let at = start + 1;
  while (at < text.length) {
    const char = text[at]!;
    if (char === "\\" && at + 1 < text.length) {
      const next = text[at + 1]!;
      value += SPARK_ESCAPES[next] ?? next;
      at += 2;
    } else if (char === quote && text[at + 1] === quote) {
      // Spark has no doubled-quote escape: 'it''s' is 'it' 's', two literals it concatenates ("its").
      at += 2;
    } else if (char === quote) {
      return { raw: text.slice(start, at + 1), value };
    } else {
      value += char;
      at += 1;
    }
  }
  throw new SqlNotSupportedError(`a string starting ${text.slice(start, start + 20)}… is not closed`);
}

/** Whether a token means something (not whitespace or a comment). */
export function significant(token: Token): boolean {
  return token.kind !== "space";
}

/** Whether the token is the word `word` (any case). */
export function isWord(token: Token | undefined, word: string): boolean {
  return token?.kind === "word" && token.value.toUpperCase() === word;
}

/** Whether the token is the symbol `symbol`. */
export function isSymbol(token: Token | undefined, symbol: string): boolean {
  return token?.kind === "symbol" && token.value === symbol;
}

/** A Spark string literal holding `value` (backslash escapes, as Spark reads them). */
export function sparkStringLiteral(value: string): string {
  return `'${value.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}
