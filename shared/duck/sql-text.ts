/** Quoting for SQL text built at run time (DuckDB dialect). Values go in as parameters where possible. */

/** `my "col"` → `"my ""col"""`. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `it's` → `'it''s'`. For places DuckDB takes no parameter, such as file lists in `read_parquet`. */
export function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** `['a', 'b']`: a DuckDB list literal of strings. */
export function stringList(values: readonly string[]): string {
  return `[${values.map(quoteLiteral).join(", ")}]`;
}
