/**
 * What compiling needs of DuckDB's parser (the validating `SqlAnalyzer` has both): a statement's
 * parse tree and the SQL text of a tree. Compiling runs once per definition version, never per batch.
 */
export interface SqlCompiler {
  /** The one statement of `sql` (json_serialize_sql's shape). */
  parse(sql: string): Promise<unknown>;
  /** SQL text of a serialized statement. */
  deparse(statement: unknown): Promise<string>;
}

type Node = Record<string, unknown>;

/** The SQL text of one expression node, via a `SELECT <expression>` of `template` (a parsed SELECT). */
export async function expressionSql(
  sql: SqlCompiler,
  template: unknown,
  expression: unknown,
): Promise<string> {
  const base = template as { node: Node };
  const alone = { ...base, node: { ...base.node, select_list: [{ ...(expression as Node), alias: "" }] } };
  return (await sql.deparse(alone)).replace(/^SELECT\s+/i, "");
}
