import { hasControlCharacter } from "./control-characters.ts";

/**
 * A declared column type (`auto_loader` `schema: {id: BIGINT}`), parsed as a DuckDB type and never
 * pasted into SQL as written: the engine renders the parsed type (`columnTypeSql`), so a value such as
 * `BIGINT) … ; COPY …` is refused at the definition instead of reaching a statement.
 *
 * The grammar is the part of DuckDB's that a file column can use:
 *   type   := base ('[' digits? ']')*
 *   base   := STRUCT '(' field (',' field)* ')' | UNION '(' field (',' field)* ')'
 *           | MAP '(' type ',' type ')' | DECIMAL ['(' p [',' s] ')'] | VARCHAR ['(' n ')'] | NAME
 *   field  := identifier type            (identifier bare or "double-quoted")
 */

export type ColumnType =
  | { readonly kind: "scalar"; readonly name: string }
  | { readonly kind: "decimal"; readonly precision: number; readonly scale: number }
  | { readonly kind: "list"; readonly element: ColumnType; readonly size?: number }
  | { readonly kind: "struct" | "union"; readonly fields: readonly (readonly [string, ColumnType])[] }
  | { readonly kind: "map"; readonly key: ColumnType; readonly value: ColumnType };

/** DuckDB's names and aliases (`duckdb_types()` on 1.5) → the canonical name rendered. */
const SCALAR_NAMES: Readonly<Record<string, string>> = {
  BIGINT: "BIGINT",
  INT8: "BIGINT",
  INT64: "BIGINT",
  LONG: "BIGINT",
  INTEGER: "INTEGER",
  INT: "INTEGER",
  INT4: "INTEGER",
  INT32: "INTEGER",
  SIGNED: "INTEGER",
  SMALLINT: "SMALLINT",
  INT2: "SMALLINT",
  INT16: "SMALLINT",
  SHORT: "SMALLINT",
  TINYINT: "TINYINT",
  INT1: "TINYINT",
  HUGEINT: "HUGEINT",
  INT128: "HUGEINT",
  UBIGINT: "UBIGINT",
  UINT64: "UBIGINT",
  UINTEGER: "UINTEGER",
  UINT32: "UINTEGER",
  USMALLINT: "USMALLINT",
  UINT16: "USMALLINT",
  UTINYINT: "UTINYINT",
  UINT8: "UTINYINT",
  UHUGEINT: "UHUGEINT",
  UINT128: "UHUGEINT",
  DOUBLE: "DOUBLE",
  FLOAT8: "DOUBLE",
  "DOUBLE PRECISION": "DOUBLE",
  FLOAT: "FLOAT",
  FLOAT4: "FLOAT",
  REAL: "FLOAT",
  BOOLEAN: "BOOLEAN",
  BOOL: "BOOLEAN",
  LOGICAL: "BOOLEAN",
  VARCHAR: "VARCHAR",
  TEXT: "VARCHAR",
  STRING: "VARCHAR",
  CHAR: "VARCHAR",
  BPCHAR: "VARCHAR",
  NVARCHAR: "VARCHAR",
  "CHARACTER VARYING": "VARCHAR",
  CHARACTER: "VARCHAR",
  BLOB: "BLOB",
  BYTEA: "BLOB",
  BINARY: "BLOB",
  VARBINARY: "BLOB",
  DATE: "DATE",
  TIME: "TIME",
  TIMETZ: "TIMETZ",
  "TIME WITH TIME ZONE": "TIMETZ",
  TIMESTAMP: "TIMESTAMP",
  DATETIME: "TIMESTAMP",
  TIMESTAMP_US: "TIMESTAMP",
  TIMESTAMPTZ: "TIMESTAMPTZ",
  "TIMESTAMP WITH TIME ZONE": "TIMESTAMPTZ",
  TIMESTAMP_S: "TIMESTAMP_S",
  TIMESTAMP_MS: "TIMESTAMP_MS",
  TIMESTAMP_NS: "TIMESTAMP_NS",
  INTERVAL: "INTERVAL",
  UUID: "UUID",
  GUID: "UUID",
  JSON: "JSON",
  BIT: "BIT",
  BITSTRING: "BIT",
  VARINT: "BIGNUM",
  BIGNUM: "BIGNUM",
};

const DECIMAL_NAMES = new Set(["DECIMAL", "NUMERIC", "DEC"]);
const MAX_DECIMAL_PRECISION = 38;
/** Deep enough for any real file, shallow enough that a hostile value cannot exhaust the stack. */
const MAX_DEPTH = 16;
const MAX_TYPE_LENGTH = 4096;

/** Thrown by `parseColumnType`; the message says what is wrong and what is allowed. */
export class ColumnTypeSyntaxError extends Error {
  override readonly name = "ColumnTypeSyntaxError";
}

/** Parses `text` as a DuckDB column type; throws `ColumnTypeSyntaxError` when it is not one. */
export function parseColumnType(text: string): ColumnType {
  if (text.length > MAX_TYPE_LENGTH)
    throw new ColumnTypeSyntaxError(`longer than ${MAX_TYPE_LENGTH} characters`);
  const parser = new TypeParser(tokenize(text));
  const type = parser.type(0);
  parser.end();
  return type;
}

/** The type as DuckDB SQL, rendered from the parse: the only form of a declared type the engine uses. */
export function columnTypeSql(text: string): string {
  return renderColumnType(parseColumnType(text));
}

export function renderColumnType(type: ColumnType): string {
  switch (type.kind) {
    case "scalar":
      return type.name;
    case "decimal":
      return `DECIMAL(${type.precision}, ${type.scale})`;
    case "list":
      return `${renderColumnType(type.element)}[${type.size ?? ""}]`;
    case "struct":
    case "union":
      return `${type.kind.toUpperCase()}(${type.fields.map(([name, t]) => `"${name.replaceAll('"', '""')}" ${renderColumnType(t)}`).join(", ")})`;
    case "map":
      return `MAP(${renderColumnType(type.key)}, ${renderColumnType(type.value)})`;
  }
}

/** Why `text` is not a column type, or undefined when it is one. */
export function columnTypeProblem(text: string): string | undefined {
  try {
    parseColumnType(text);
    return undefined;
  } catch (error) {
    if (error instanceof ColumnTypeSyntaxError) return error.message;
    throw error;
  }
}

type Token =
  | { readonly kind: "word"; readonly text: string }
  | { readonly kind: "quoted"; readonly text: string }
  | { readonly kind: "number"; readonly value: number }
  | { readonly kind: "punct"; readonly text: "(" | ")" | "[" | "]" | "," };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if ("()[],".includes(c)) {
      tokens.push({ kind: "punct", text: c as "(" | ")" | "[" | "]" | "," });
      i++;
    } else if (/[0-9]/.test(c)) {
      const digits = /^[0-9]+/.exec(text.slice(i))![0];
      if (digits.length > 9) throw new ColumnTypeSyntaxError(`number ${digits} is too large`);
      tokens.push({ kind: "number", value: Number(digits) });
      i += digits.length;
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))![0];
      tokens.push({ kind: "word", text: word });
      i += word.length;
    } else if (c === '"') {
      let name = "";
      let j = i + 1;
      for (;;) {
        if (j >= text.length) throw new ColumnTypeSyntaxError("a quoted field name is not closed");
        if (text[j] === '"' && text[j + 1] === '"') {
          name += '"';
          j += 2;
        } else if (text[j] === '"') {
          break;
        } else {
          name += text[j];
          j++;
        }
      }
      if (name === "" || hasControlCharacter(name)) {
        throw new ColumnTypeSyntaxError("a quoted field name must be non-empty, without control characters");
      }
      tokens.push({ kind: "quoted", text: name });
      i = j + 1;
    } else {
      throw new ColumnTypeSyntaxError(`unexpected ${JSON.stringify(c)}`);
    }
  }
  return tokens;
}

class TypeParser {
  #at = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  type(depth: number): ColumnType {
    if (depth > MAX_DEPTH) throw new ColumnTypeSyntaxError(`nested deeper than ${MAX_DEPTH} levels`);
    let type = this.base(depth);
    while (this.isPunct("[")) {
      this.#at++;
      const size = this.peek();
      let fixed: number | undefined;
      if (size?.kind === "number") {
        if (size.value < 1) throw new ColumnTypeSyntaxError("an array size must be at least 1");
        fixed = size.value;
        this.#at++;
      }
      this.expect("]");
      type =
        fixed === undefined ? { kind: "list", element: type } : { kind: "list", element: type, size: fixed };
    }
    return type;
  }

  end(): void {
    const extra = this.peek();
    if (extra) throw new ColumnTypeSyntaxError(`unexpected ${describe(extra)} after the type`);
  }

  private base(depth: number): ColumnType {
    const first = this.peek();
    if (first?.kind !== "word") {
      throw new ColumnTypeSyntaxError(`expected a type name, found ${first ? describe(first) : "the end"}`);
    }
    this.#at++;
    const name = first.text.toUpperCase();
    if (name === "STRUCT" || name === "UNION") {
      return { kind: name === "STRUCT" ? "struct" : "union", fields: this.fields(depth) };
    }
    if (name === "MAP") {
      this.expect("(");
      const key = this.type(depth + 1);
      this.expect(",");
      const value = this.type(depth + 1);
      this.expect(")");
      return { kind: "map", key, value };
    }
    if (DECIMAL_NAMES.has(name)) return this.decimal();
    const words = [name];
    // Multi-word names: DOUBLE PRECISION, CHARACTER VARYING, TIME[STAMP] WITH TIME ZONE.
    while (this.peek()?.kind === "word") {
      const next = (this.peek() as { text: string }).text.toUpperCase();
      const candidate = [...words, next].join(" ");
      if (!Object.keys(SCALAR_NAMES).some((n) => n === candidate || n.startsWith(candidate + " "))) break;
      words.push(next);
      this.#at++;
    }
    const canonical = SCALAR_NAMES[words.join(" ")];
    if (canonical === undefined) {
      throw new ColumnTypeSyntaxError(
        `${words.join(" ")} is not a DuckDB column type: use e.g. BIGINT, DOUBLE, DECIMAL(18, 2), VARCHAR, BOOLEAN, DATE, TIMESTAMP, TIMESTAMPTZ, BLOB, a list (BIGINT[]), STRUCT(a BIGINT, b VARCHAR) or MAP(VARCHAR, BIGINT)`,
      );
    }
    if (canonical === "VARCHAR" && this.isPunct("(")) {
      // DuckDB accepts and ignores a length: VARCHAR(10).
      this.#at++;
      this.number("a VARCHAR length");
      this.expect(")");
    }
    return { kind: "scalar", name: canonical };
  }

  private decimal(): ColumnType {
    if (!this.isPunct("(")) return { kind: "decimal", precision: 18, scale: 3 };
    this.#at++;
    const precision = this.number("a DECIMAL precision");
    let scale = 0;
    if (this.isPunct(",")) {
      this.#at++;
      scale = this.number("a DECIMAL scale");
    }
    this.expect(")");
    if (precision < 1 || precision > MAX_DECIMAL_PRECISION) {
      throw new ColumnTypeSyntaxError(
        `DECIMAL precision ${precision} is not between 1 and ${MAX_DECIMAL_PRECISION}`,
      );
    }
    if (scale > precision)
      throw new ColumnTypeSyntaxError(`DECIMAL scale ${scale} is larger than its precision ${precision}`);
    return { kind: "decimal", precision, scale };
  }

  private fields(depth: number): (readonly [string, ColumnType])[] {
    this.expect("(");
    const fields: (readonly [string, ColumnType])[] = [];
    const seen = new Set<string>();
    for (;;) {
      const name = this.peek();
      if (name?.kind !== "word" && name?.kind !== "quoted") {
        throw new ColumnTypeSyntaxError(`expected a field name, found ${name ? describe(name) : "the end"}`);
      }
      this.#at++;
      if (seen.has(name.text.toLowerCase()))
        throw new ColumnTypeSyntaxError(`field ${name.text} appears twice`);
      seen.add(name.text.toLowerCase());
      fields.push([name.text, this.type(depth + 1)]);
      if (this.isPunct(")")) break;
      this.expect(",");
    }
    this.#at++;
    return fields;
  }

  private number(what: string): number {
    const token = this.peek();
    if (token?.kind !== "number")
      throw new ColumnTypeSyntaxError(`expected ${what}, found ${token ? describe(token) : "the end"}`);
    this.#at++;
    return token.value;
  }

  private expect(punct: "(" | ")" | "[" | "]" | ","): void {
    const token = this.peek();
    if (token?.kind !== "punct" || token.text !== punct) {
      throw new ColumnTypeSyntaxError(`expected "${punct}", found ${token ? describe(token) : "the end"}`);
    }
    this.#at++;
  }

  private isPunct(punct: string): boolean {
    const token = this.peek();
    return token?.kind === "punct" && token.text === punct;
  }

  private peek(): Token | undefined {
    return this.tokens[this.#at];
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case "number":
      return String(token.value);
    case "quoted":
      return JSON.stringify(token.text);
    default:
      return `"${token.text}"`;
  }
}
