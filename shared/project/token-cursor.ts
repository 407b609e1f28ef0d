import { PROJECT_ISSUE_CODES, StatementProblem } from "./errors.ts";
import { isSymbol, isWord, type Token } from "./sql-tokens.ts";
import type { NameRef, QueryText } from "./statements.ts";

/**
 * A cursor over one statement's tokens: peek, accept and expect words and symbols, and read the
 * shapes every clause shares (names, column lists, parenthesized text, the rest as a query). A
 * grammar extends it; each expectation it fails throws a `StatementProblem` at the token's offset.
 */

export const syntaxProblem = (offset: number, message: string) =>
  new StatementProblem(offset, PROJECT_ISSUE_CODES.syntaxError, message);

export class TokenCursor {
  protected i = 0;
  /** Where the statement ends: a problem "at the end" points there. */
  protected readonly textEnd: number;
  constructor(
    protected readonly tokens: readonly Token[],
    private readonly source: string,
  ) {
    this.textEnd = tokens[tokens.length - 1]?.end ?? 0;
  }

  protected columnList(what: string): string[] {
    this.expectSymbol("(", `${what} takes a list of columns in parentheses`);
    const names = this.bareList();
    this.expectSymbol(")");
    return names;
  }

  protected bareList(): string[] {
    const names = [this.identifier("a column name")];
    while (this.acceptSymbol(",")) names.push(this.identifier("a column name"));
    return names;
  }

  /** `( … )`: the text between the parentheses. */
  protected parenthesizedText(what: string): string {
    const open = this.peek();
    this.expectSymbol("(", `${what} goes in parentheses`);
    const from = this.i - 1;
    this.i--;
    this.skipBalanced();
    const inner = this.tokens.slice(from + 1, this.i - 1);
    if (inner.length === 0) throw syntaxProblem(open!.start, `${what} is empty`);
    return this.textOf(inner[0]!, inner[inner.length - 1]!);
  }

  protected name(what: string): NameRef {
    const first = this.peek();
    const parts = [this.identifier(what)];
    while (isSymbol(this.peek(), ".")) {
      this.i++;
      parts.push(this.identifier(what));
    }
    return { parts, start: first!.start };
  }

  protected identifier(what: string): string {
    const token = this.next(what);
    if (token.kind !== "word" && token.kind !== "quoted")
      throw syntaxProblem(token.start, `expected ${what}, found ${describeToken(token)}`);
    return token.value;
  }

  /** The tokens from here to the end of the statement, as a query. */
  protected rest(what: string): QueryText {
    const from = this.i;
    this.i = this.tokens.length;
    return this.slice(from, this.i, what);
  }

  protected slice(from: number, to: number, what: string): QueryText {
    if (from >= to) throw syntaxProblem(this.tokens[from]?.start ?? this.textEnd, `${what} is missing`);
    const tokens = this.tokens.slice(from, to);
    return { tokens, start: tokens[0]!.start, end: tokens[tokens.length - 1]!.end };
  }

  /** One token, or a whole parenthesized group. */
  protected skipBalanced(): void {
    let depth = 0;
    do {
      const token = this.next("the rest of the clause");
      if (isSymbol(token, "(")) depth++;
      else if (isSymbol(token, ")")) depth--;
      if (depth < 0) throw syntaxProblem(token.start, "a ) closes no (");
    } while (depth > 0);
  }

  protected textOf(first: Token, last: Token): string {
    return this.source.slice(first.start, last.end);
  }

  protected peek(): Token | undefined {
    return this.tokens[this.i];
  }

  protected next(what: string): Token {
    const token = this.tokens[this.i];
    if (token === undefined) throw syntaxProblem(this.textEnd, `expected ${what}, but the statement ends`);
    this.i++;
    return token;
  }

  protected acceptWord(word: string): boolean {
    if (!isWord(this.peek(), word)) return false;
    this.i++;
    return true;
  }

  protected acceptWords(...words: string[]): boolean {
    if (!words.every((word, k) => isWord(this.tokens[this.i + k], word))) return false;
    this.i += words.length;
    return true;
  }

  protected acceptSymbol(symbol: string): boolean {
    if (!isSymbol(this.peek(), symbol)) return false;
    this.i++;
    return true;
  }

  protected expectWord(word: string, hint: string): void {
    const token = this.peek();
    if (!this.acceptWord(word))
      throw syntaxProblem(
        token?.start ?? this.textEnd,
        `expected ${word}, found ${describeToken(token)}: ${hint}`,
      );
  }

  protected expectSymbol(symbol: string, hint?: string): void {
    const token = this.peek();
    if (!this.acceptSymbol(symbol))
      throw syntaxProblem(
        token?.start ?? this.textEnd,
        `expected "${symbol}", found ${describeToken(token)}${hint ? `: ${hint}` : ""}`,
      );
  }
}

export function describeToken(token: Token | undefined): string {
  if (token === undefined) return "the end of the statement";
  if (token.kind === "string") return `'${token.value}'`;
  if (token.kind === "quoted") return `\`${token.value}\``;
  return `"${token.value}"`;
}
