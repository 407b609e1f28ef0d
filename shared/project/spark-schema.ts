import { isSymbol, isWord, tokenize, type Token } from "./sql-tokens.ts";

/**
 * A Spark DDL schema (`read_files(…, schema => 'id BIGINT, name STRING, tags ARRAY<STRING>')`) as
 * the column types Ebb's auto_loader declares (DuckDB's: `{id: BIGINT, name: VARCHAR, tags: VARCHAR[]}`).
 * Spark's TIMESTAMP is an instant (TIMESTAMPTZ); TIMESTAMP_NTZ is a wall-clock time (TIMESTAMP).
 */

const SCALARS: Readonly<Record<string, string>> = {
  STRING: "VARCHAR",
  VARCHAR: "VARCHAR",
  CHAR: "VARCHAR",
  BINARY: "BLOB",
  BOOLEAN: "BOOLEAN",
  BYTE: "TINYINT",
  TINYINT: "TINYINT",
  SHORT: "SMALLINT",
  SMALLINT: "SMALLINT",
  INT: "INTEGER",
  INTEGER: "INTEGER",
  LONG: "BIGINT",
  BIGINT: "BIGINT",
  FLOAT: "FLOAT",
  REAL: "FLOAT",
  DOUBLE: "DOUBLE",
  DATE: "DATE",
  TIMESTAMP: "TIMESTAMPTZ",
  TIMESTAMP_LTZ: "TIMESTAMPTZ",
  TIMESTAMP_NTZ: "TIMESTAMP",
};

export type SparkSchemaResult =
  | { readonly ok: true; readonly columns: Record<string, string> }
  | { readonly ok: false; readonly message: string };

export function sparkSchemaColumns(ddl: string): SparkSchemaResult {
  const tokenized = tokenize(ddl);
  if (!tokenized.ok) return { ok: false, message: tokenized.message };
  try {
    const reader = new TypeReader(tokenized.tokens);
    const columns: Record<string, string> = {};
    do {
      const name = reader.name();
      reader.accept(":");
      columns[name] = reader.type();
      reader.skipNotNull();
    } while (reader.accept(","));
    reader.end();
    return { ok: true, columns };
  } catch (error) {
    if (error instanceof SchemaSyntax) return { ok: false, message: error.message };
    throw error;
  }
}

class SchemaSyntax extends Error {}

class TypeReader {
  private i = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  name(): string {
    const token = this.tokens[this.i++];
    if (token?.kind !== "word" && token?.kind !== "quoted")
      throw new SchemaSyntax(`expected a column name, found ${token ? token.value : "the end"}`);
    return token.value;
  }

  type(): string {
    const word = this.name().toUpperCase();
    if (word === "ARRAY") {
      this.expect("<");
      const element = this.type();
      this.expect(">");
      return `${element}[]`;
    }
    if (word === "MAP") {
      this.expect("<");
      const key = this.type();
      this.expect(",");
      const value = this.type();
      this.expect(">");
      return `MAP(${key}, ${value})`;
    }
    if (word === "STRUCT") {
      this.expect("<");
      const fields: string[] = [];
      do {
        const name = this.name();
        this.accept(":");
        fields.push(`"${name.replaceAll('"', '""')}" ${this.type()}`);
        this.skipNotNull();
      } while (this.accept(","));
      this.expect(">");
      return `STRUCT(${fields.join(", ")})`;
    }
    if (word === "DECIMAL" || word === "DEC" || word === "NUMERIC") {
      if (!this.accept("(")) return "DECIMAL(10, 0)";
      const precision = this.tokens[this.i++]?.value;
      const scale = this.accept(",") ? this.tokens[this.i++]?.value : "0";
      this.expect(")");
      return `DECIMAL(${precision}, ${scale})`;
    }
    if ((word === "VARCHAR" || word === "CHAR") && this.accept("(")) {
      this.i++;
      this.expect(")");
    }
    const scalar = SCALARS[word];
    if (scalar === undefined) throw new SchemaSyntax(`${word} is not a Spark type Ebb reads files as`);
    return scalar;
  }

  skipNotNull(): void {
    if (isWord(this.tokens[this.i], "NOT") && isWord(this.tokens[this.i + 1], "NULL")) this.i += 2;
  }

  accept(symbol: string): boolean {
    if (!isSymbol(this.tokens[this.i], symbol)) return false;
    this.i++;
    return true;
  }

  expect(symbol: string): void {
    if (!this.accept(symbol))
      throw new SchemaSyntax(`expected "${symbol}", found ${this.tokens[this.i]?.value ?? "the end"}`);
  }

  end(): void {
    if (this.i < this.tokens.length) throw new SchemaSyntax(`unexpected "${this.tokens[this.i]!.value}"`);
  }
}
