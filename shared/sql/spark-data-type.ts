import { SqlNotSupportedError } from "./errors.ts";

/**
 * A Spark SQL data type as written in a DDL string (`from_json`'s schema: `array<struct<name: string,
 * passed_records: int>>`) → the DuckDB type that holds the same values (`STRUCT("name" VARCHAR,
 * "passed_records" INTEGER)[]`). Pure; a type it does not know is refused by name.
 */

const PRIMITIVES: Readonly<Record<string, string>> = {
  string: "VARCHAR",
  varchar: "VARCHAR",
  char: "VARCHAR",
  boolean: "BOOLEAN",
  tinyint: "TINYINT",
  byte: "TINYINT",
  smallint: "SMALLINT",
  short: "SMALLINT",
  int: "INTEGER",
  integer: "INTEGER",
  bigint: "BIGINT",
  long: "BIGINT",
  float: "FLOAT",
  real: "FLOAT",
  double: "DOUBLE",
  date: "DATE",
  timestamp: "TIMESTAMPTZ",
  timestamp_ntz: "TIMESTAMP",
  binary: "BLOB",
};

export function duckTypeOfSparkType(text: string): string {
  const reader = new TypeReader(text);
  const type = reader.type();
  reader.end();
  return type;
}

class TypeReader {
  #at = 0;
  constructor(private readonly text: string) {}

  type(): string {
    const name = this.#word().toLowerCase();
    if (name === "array") {
      this.#expect("<");
      const element = this.type();
      this.#expect(">");
      return `${element}[]`;
    }
    if (name === "map") {
      this.#expect("<");
      const key = this.type();
      this.#expect(",");
      const value = this.type();
      this.#expect(">");
      return `MAP(${key}, ${value})`;
    }
    if (name === "struct") {
      this.#expect("<");
      const fields: string[] = [];
      while (!this.#skipIf(">")) {
        if (fields.length > 0) this.#expect(",");
        const field = this.#word();
        this.#skipIf(":");
        fields.push(`"${field.replaceAll('"', '""')}" ${this.type()}`);
      }
      return `STRUCT(${fields.join(", ")})`;
    }
    if (name === "decimal" || name === "dec" || name === "numeric") {
      if (!this.#skipIf("(")) return "DECIMAL(10, 0)";
      const precision = this.#word();
      const scale = this.#skipIf(",") ? this.#word() : "0";
      this.#expect(")");
      return `DECIMAL(${Number(precision)}, ${Number(scale)})`;
    }
    if ((name === "varchar" || name === "char") && this.#skipIf("(")) {
      this.#word();
      this.#expect(")");
    }
    const primitive = PRIMITIVES[name];
    if (primitive === undefined)
      throw new SqlNotSupportedError(
        `the data type ${JSON.stringify(name)} is not supported in a schema here`,
      );
    return primitive;
  }

  end(): void {
    this.#space();
    if (this.#at < this.text.length)
      throw new SqlNotSupportedError(`the schema ${JSON.stringify(this.text)} has more after its type`);
  }

  #space(): void {
    while (/\s/.test(this.text[this.#at] ?? "")) this.#at++;
  }

  #word(): string {
    this.#space();
    const match = /^(`[^`]+`|[A-Za-z0-9_]+)/.exec(this.text.slice(this.#at));
    if (!match)
      throw new SqlNotSupportedError(
        `the schema ${JSON.stringify(this.text)} does not parse at position ${this.#at}`,
      );
    this.#at += match[0].length;
    return match[0].replace(/^`|`$/g, "");
  }

  #skipIf(symbol: string): boolean {
    this.#space();
    if (this.text[this.#at] !== symbol) return false;
    this.#at++;
    return true;
  }

  #expect(symbol: string): void {
    if (!this.#skipIf(symbol))
      throw new SqlNotSupportedError(
        `the schema ${JSON.stringify(this.text)} needs "${symbol}" at position ${this.#at}`,
      );
  }
}
