import type { TableName } from "../../api/resource-names.ts";
import type { SqlDialect } from "../../pipeline/sql-dialect.ts";
import { loadPipeline, type ControlPlane } from "../plane/control-plane.ts";

/**
 * The dialect of a user's SQL over one table (a table query, the onset predicate): that of the
 * pipeline that owns the table (`pipelines.sqlDialect`), so a query reads like the pipeline's own
 * SQL. A table no pipeline owns (an external Delta table, one whose pipeline was deleted) keeps
 * DuckDB, the default of pipelines without the key, so the queries written against it keep working;
 * the SQL statements API is the Spark SQL way into any table.
 */
export interface TableSqlDialect {
  readonly owner?: string;
  readonly dialect: SqlDialect;
}

export async function tableSqlDialect(plane: ControlPlane, name: TableName): Promise<TableSqlDialect> {
  const owner = await plane.pipelines.tableOwner(`${name.catalog}.${name.schema}.${name.table}`);
  if (owner === undefined) return { dialect: "duckdb" };
  const { pipeline } = await loadPipeline(plane, owner);
  return { owner, dialect: pipeline.settings.sqlDialect };
}
