import type { DuckSession } from "../../duck/duck-session.ts";
import { quoteIdentifier, quoteLiteral, stringList } from "../../duck/sql-text.ts";

/**
 * A SQL relation over local parquet files that all belong to one logical table: every column cast to
 * its table type, columns missing from a file (older schema) read as null, and per-file constant
 * columns (partition values, commit version, change type) joined in by file name.
 */
export interface RelationColumn {
  readonly name: string;
  /** DuckDB type of the output column. */
  readonly sqlType: string;
  /**
   * Where the value comes from: `physical` reads the file's column of that name, `constant` takes
   * the SQL expression the file gives in `FileSource.constants`.
   */
  readonly source: "physical" | "constant";
}

export interface FileSource {
  /** Absolute local path of a parquet file. */
  readonly localPath: string;
  /** SQL expression per `constant` column. */
  readonly constants: Readonly<Record<string, string>>;
}

/** Name of the file-name column DuckDB adds; chosen not to collide with table columns. */
const FILE_COLUMN = "__ebb_source_file";

/** Builds the SELECT for `files` producing exactly `columns`, in that order. */
export async function fileRelationSql(
  duck: DuckSession,
  files: readonly FileSource[],
  columns: readonly RelationColumn[],
): Promise<string> {
  const present =
    files.length === 0 ? new Map<string, string>() : await physicalColumns(duck, sourceOf(files));
  return relationSql(files, columns, (name) => present.get(name.toLowerCase()));
}

/**
 * `fileRelationSql` without asking DuckDB which columns the files have (a pass over every file's
 * footer): every `physical` column is read as named, so the SELECT fails to bind when no file has
 * one (a column added after them), and `fileRelationSql` must be asked then. Where it binds, its rows
 * are those `fileRelationSql` gives: a column missing from some files is NULL in their rows either way.
 */
export function assumedFileRelationSql(
  files: readonly FileSource[],
  columns: readonly RelationColumn[],
): string {
  return relationSql(files, columns, (name) => name);
}

function sourceOf(files: readonly FileSource[]): string {
  return `read_parquet(${stringList(files.map((f) => f.localPath))}, union_by_name = true, filename = ${quoteLiteral(FILE_COLUMN)})`;
}

/** The SELECT, given the files' name of each table column (`undefined`: in no file, read as NULL). */
function relationSql(
  files: readonly FileSource[],
  columns: readonly RelationColumn[],
  physicalName: (name: string) => string | undefined,
): string {
  const typedNull = (column: RelationColumn) =>
    `CAST(NULL AS ${column.sqlType}) AS ${quoteIdentifier(column.name)}`;
  if (files.length === 0) {
    const select = columns.length === 0 ? "1 AS __empty" : columns.map(typedNull).join(", ");
    return `SELECT ${select} WHERE false`;
  }
  const source = sourceOf(files);
  const constantColumns = columns.filter((c) => c.source === "constant");
  const select = columns.map((column) => {
    const name = quoteIdentifier(column.name);
    if (column.source === "constant") return `k.${name}`;
    const physical = physicalName(column.name);
    return physical === undefined
      ? typedNull(column)
      : `CAST(d.${quoteIdentifier(physical)} AS ${column.sqlType}) AS ${name}`;
  });
  if (constantColumns.length === 0) return `SELECT ${select.join(", ")} FROM ${source} d`;
  const rows = files.map((file) => {
    const values = constantColumns.map((column) => {
      const expression = file.constants[column.name];
      return expression === undefined
        ? `CAST(NULL AS ${column.sqlType})`
        : `CAST(${expression} AS ${column.sqlType})`;
    });
    return `(${[quoteLiteral(file.localPath), ...values].join(", ")})`;
  });
  const names = [quoteIdentifier(FILE_COLUMN), ...constantColumns.map((c) => quoteIdentifier(c.name))];
  return (
    `SELECT ${select.join(", ")} FROM ${source} d ` +
    `JOIN (VALUES ${rows.join(", ")}) k(${names.join(", ")}) ON d.${quoteIdentifier(FILE_COLUMN)} = k.${quoteIdentifier(FILE_COLUMN)}`
  );
}

/** The columns the files have, keyed by lower-cased name (Delta column names are case-insensitive). */
async function physicalColumns(duck: DuckSession, source: string): Promise<Map<string, string>> {
  const rows = await duck.rows(`DESCRIBE SELECT * FROM ${source}`);
  const names = new Map<string, string>();
  for (const row of rows) {
    const name = String(row.column_name);
    if (name !== FILE_COLUMN) names.set(name.toLowerCase(), name);
  }
  return names;
}
