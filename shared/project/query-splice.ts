import type { QueryText } from "./statements.ts";

/**
 * How the dataflow graph rewrites a query's text: the stream and table reads it resolved spliced in
 * where they were written, and a declared column list applied over the result.
 */

/** `[start, end)` of the file's text, to be written as `text`. */
export interface Splice {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** The query's text with each `[start, end)` replaced. */
export function splice(text: string, query: QueryText, splices: readonly Splice[]): string {
  let out = "";
  let at = query.start;
  for (const s of [...splices].sort((a, b) => a.start - b.start)) {
    out += text.slice(at, s.start) + s.text;
    at = s.end;
  }
  return out + text.slice(at, query.end);
}

/** A declared column list: the query's columns cast to the declared types, in the declared order. */
export function withDeclaredColumns(sql: string, columns: readonly { name: string; type: string }[]): string {
  if (columns.length === 0) return sql;
  const list = columns.map((c) => `CAST(${quoted(c.name)} AS ${c.type}) AS ${quoted(c.name)}`).join(", ");
  return `SELECT ${list} FROM (${sql}) AS declared_columns`;
}

/** A column name as Spark SQL writes it: bare when it can be, else in backquotes. */
function quoted(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replaceAll("`", "``")}\``;
}
