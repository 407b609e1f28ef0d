import { randomUUID } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { DuckSession } from "../../duck/duck-session.ts";
import type { ScratchFolder } from "../../duck/scratch-folder.ts";
import { quoteIdentifier, quoteLiteral } from "../../duck/sql-text.ts";
import { SchemaMismatchError } from "../errors.ts";
import { duckType, type DeltaType, type StructType } from "../table/schema.ts";

/**
 * The rows an operation writes. The pipeline engine hands over DuckDB SQL over its session (a query,
 * a view or temp table name wrapped in `SELECT * FROM ...`); tests and small callers hand over JS row
 * objects. Either way the writer sees one SQL relation with exactly the table's columns, in schema
 * order, cast to their types.
 */
export type RowSource =
  | {
      readonly sql: string;
      /**
       * The column names `sql` gives, when the caller has described it already (its DESCRIBE, in the
       * same session): staging then does not describe it again.
       */
      readonly columns?: readonly string[];
    }
  /** Plain objects keyed by column name (interfaces welcome); a missing key is NULL. */
  | { readonly rows: readonly object[] };

export interface StagedRows {
  /** A SELECT producing the schema's columns, in order and type. */
  readonly sql: string;
  dispose(): Promise<void>;
}

/**
 * Stages `source` against `schema`: a column the table does not have is an error; a nullable column
 * a SQL source lacks is NULL, a non-nullable one is an error. NULLs in NOT NULL columns are caught
 * when the files are written (`not-null-check.ts`), for every operation.
 */
export async function stageRows(
  duck: DuckSession,
  scratch: ScratchFolder,
  schema: StructType,
  source: RowSource,
  /** Columns of a SQL source that are not the table's, passed through after the table's (MERGE conditions). */
  passThrough: readonly string[] = [],
): Promise<StagedRows> {
  if ("sql" in source) return stageSql(duck, schema, source.sql, passThrough, source.columns);
  if (passThrough.length > 0)
    throw new SchemaMismatchError(`pass-through columns need a SQL row source: ${passThrough.join(", ")}`);
  return stageJsRows(scratch, schema, source.rows);
}

async function stageSql(
  duck: DuckSession,
  schema: StructType,
  sql: string,
  passThrough: readonly string[],
  columns: readonly string[] | undefined,
): Promise<StagedRows> {
  const present = new Set(
    columns ?? (await duck.rows(`DESCRIBE (${sql})`)).map((row) => String(row.column_name)),
  );
  const missingPassThrough = passThrough.filter((name) => !present.has(name));
  if (missingPassThrough.length > 0)
    throw new SchemaMismatchError(`the rows lack column ${missingPassThrough.join(", ")}`);
  assertKnownColumns(schema, new Set([...present].filter((name) => !passThrough.includes(name))));
  const select = schema.fields.map((field) => {
    const value = present.has(field.name)
      ? quoteIdentifier(field.name)
      : missingColumn(field.name, field.nullable);
    return `CAST(${value} AS ${duckType(field.type)}) AS ${quoteIdentifier(field.name)}`;
  });
  const extra = passThrough.map(quoteIdentifier);
  return { sql: `SELECT ${[...select, ...extra].join(", ")} FROM (${sql})`, dispose: async () => {} };
}

async function stageJsRows(
  scratch: ScratchFolder,
  schema: StructType,
  rows: readonly object[],
): Promise<StagedRows> {
  // A key absent from a row is NULL; NOT NULL is checked on the staged rows.
  assertKnownColumns(schema, new Set(rows.flatMap((row) => Object.keys(row))));
  const file = path.join(scratch.dir, `rows-${randomUUID()}.ndjson`);
  const lines = rows.map((row) =>
    JSON.stringify(
      Object.fromEntries(
        schema.fields.map((f) => [f.name, toJsonValue((row as Record<string, unknown>)[f.name], f.type)]),
      ),
    ),
  );
  // DuckDB needs at least one record to read; an empty batch reads a dummy one and keeps none.
  await writeFile(file, (rows.length === 0 ? "{}" : lines.join("\n")) + "\n");
  const jsonColumns = schema.fields.map(
    (f) => `${quoteLiteral(f.name)}: ${quoteLiteral(jsonReadType(f.type))}`,
  );
  const select = schema.fields.map((f) => {
    const c = quoteIdentifier(f.name);
    return `${f.type === "binary" ? `unhex(${c})` : c} AS ${c}`;
  });
  const relation = `read_json(${quoteLiteral(file)}, columns = {${jsonColumns.join(", ")}}, format = 'newline_delimited')`;
  return {
    sql: `SELECT ${select.join(", ")} FROM ${relation}${rows.length === 0 ? " LIMIT 0" : ""}`,
    dispose: () => rm(file, { force: true }),
  };
}

function jsonReadType(type: DeltaType): string {
  return type === "binary" ? "VARCHAR" : duckType(type);
}

/** A JS value in the JSON form DuckDB's `read_json` casts to the column type. */
function toJsonValue(value: unknown, type: DeltaType): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Date) return type === "date" ? value.toISOString().slice(0, 10) : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString("hex");
  return value;
}

function assertKnownColumns(schema: StructType, present: ReadonlySet<string>): void {
  const known = new Set(schema.fields.map((f) => f.name));
  const unknown = [...present].filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new SchemaMismatchError(
      `the rows have columns the table does not: ${unknown.join(", ")} (table columns: ${[...known].join(", ")})`,
      { data: { unknownColumns: unknown } },
    );
  }
}

function missingColumn(name: string, nullable: boolean): string {
  if (!nullable) {
    throw new SchemaMismatchError(`the rows lack column ${name}, which is NOT NULL`, {
      data: { column: name },
    });
  }
  return "NULL";
}
