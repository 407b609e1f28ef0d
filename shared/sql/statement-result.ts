import { DecimalText } from "../duck/answer-values.ts";

/**
 * A query's columns and rows as the Databricks Statement Execution API answers them (`manifest` and
 * `result` of a `StatementResponse`, format `JSON_ARRAY`, disposition `INLINE`, one chunk): every
 * value the string Databricks would send, or null. Pure.
 */

export interface ResultColumn {
  readonly name: string;
  /** DuckDB's type text (`BIGINT`, `TIMESTAMP`, `DECIMAL(10,2)`, `VARCHAR[]`). */
  readonly duckType: string;
}

export interface ColumnInfo {
  readonly name: string;
  readonly position: number;
  readonly type_name: string;
  readonly type_text: string;
  readonly type_precision?: number;
  readonly type_scale?: number;
}

/** DuckDB's scalar types → Databricks' `type_name` and `type_text`. */
const SCALARS: Readonly<Record<string, readonly [string, string]>> = {
  BOOLEAN: ["BOOLEAN", "BOOLEAN"],
  TINYINT: ["BYTE", "TINYINT"],
  SMALLINT: ["SHORT", "SMALLINT"],
  INTEGER: ["INT", "INT"],
  BIGINT: ["LONG", "BIGINT"],
  UTINYINT: ["SHORT", "SMALLINT"],
  USMALLINT: ["INT", "INT"],
  UINTEGER: ["LONG", "BIGINT"],
  FLOAT: ["FLOAT", "FLOAT"],
  DOUBLE: ["DOUBLE", "DOUBLE"],
  VARCHAR: ["STRING", "STRING"],
  JSON: ["STRING", "STRING"],
  UUID: ["STRING", "STRING"],
  TIME: ["STRING", "STRING"],
  BLOB: ["BINARY", "BINARY"],
  DATE: ["DATE", "DATE"],
  TIMESTAMP: ["TIMESTAMP", "TIMESTAMP"],
  "TIMESTAMP WITH TIME ZONE": ["TIMESTAMP", "TIMESTAMP"],
  TIMESTAMP_S: ["TIMESTAMP", "TIMESTAMP"],
  TIMESTAMP_MS: ["TIMESTAMP", "TIMESTAMP"],
  TIMESTAMP_NS: ["TIMESTAMP", "TIMESTAMP"],
  INTERVAL: ["INTERVAL", "INTERVAL"],
  '"NULL"': ["NULL", "VOID"],
  NULL: ["NULL", "VOID"],
};

export function columnInfo(column: ResultColumn, position: number): ColumnInfo {
  const type = column.duckType.trim();
  const scalar = SCALARS[type.toUpperCase()];
  if (scalar) return { name: column.name, position, type_name: scalar[0], type_text: scalar[1] };
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/i.exec(type);
  if (decimal) {
    const [precision, scale] = [Number(decimal[1]), Number(decimal[2])];
    return {
      name: column.name,
      position,
      type_name: "DECIMAL",
      type_text: `DECIMAL(${precision},${scale})`,
      type_precision: precision,
      type_scale: scale,
    };
  }
  const kind = /\]$/.test(type)
    ? "ARRAY"
    : /^STRUCT/i.test(type)
      ? "STRUCT"
      : /^MAP/i.test(type)
        ? "MAP"
        : /^(HUGEINT|UHUGEINT|UBIGINT)$/i.test(type)
          ? "DECIMAL"
          : "STRING";
  return { name: column.name, position, type_name: kind, type_text: type };
}

/** One value as the JSON_ARRAY format's string (or null). */
export function cellText(value: unknown, info: ColumnInfo): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (value instanceof Date) {
    const iso = value.toISOString();
    return info.type_name === "DATE" ? iso.slice(0, 10) : iso;
  }
  if (typeof value === "bigint" || typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value instanceof DecimalText) return value.text;
  return JSON.stringify(value, (_key, inner: unknown) => jsonSafe(inner));
}

/** Lists, structs and maps as JSON text, as Databricks sends them: exact integers, ISO times. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), v]));
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  return value;
}

/** One chunk of a result: `row_count` rows from `row_offset` on, and where the next chunk is. */
export interface ResultChunk {
  readonly chunk_index: number;
  readonly row_offset: number;
  readonly row_count: number;
  readonly data_array: (string | null)[][];
  readonly next_chunk_index?: number;
  readonly next_chunk_internal_link?: string;
}

export interface StatementResult {
  readonly manifest: {
    readonly format: "JSON_ARRAY";
    readonly schema: { readonly column_count: number; readonly columns: readonly ColumnInfo[] };
    readonly total_chunk_count: number;
    readonly chunks: readonly { chunk_index: number; row_offset: number; row_count: number }[];
    readonly total_row_count: number;
    readonly truncated: boolean;
  };
  /** The first chunk, inline. */
  readonly result: ResultChunk;
}

/** The manifest of a result of `chunks` (each its row count), in order. */
export function statementManifest(
  columns: readonly ResultColumn[],
  chunkRows: readonly number[],
  truncated: boolean,
): StatementResult["manifest"] {
  const infos = columns.map(columnInfo);
  let offset = 0;
  const chunks = (chunkRows.length > 0 ? chunkRows : [0]).map((row_count, chunk_index) => {
    const chunk = { chunk_index, row_offset: offset, row_count };
    offset += row_count;
    return chunk;
  });
  return {
    format: "JSON_ARRAY",
    schema: { column_count: infos.length, columns: infos },
    total_chunk_count: chunks.length,
    chunks,
    total_row_count: offset,
    truncated,
  };
}

/** Chunk `chunk_index` of the manifest, its rows as Databricks' JSON_ARRAY strings. */
export function statementChunk(
  manifest: StatementResult["manifest"],
  statementId: string,
  chunkIndex: number,
  rows: readonly Record<string, unknown>[],
): ResultChunk {
  const infos = manifest.schema.columns;
  const { row_offset, row_count } = manifest.chunks[chunkIndex]!;
  const next = chunkIndex + 1 < manifest.total_chunk_count ? chunkIndex + 1 : undefined;
  return {
    chunk_index: chunkIndex,
    row_offset,
    row_count,
    data_array: rows.map((row) => infos.map((info) => cellText(row[info.name], info))),
    ...(next !== undefined
      ? {
          next_chunk_index: next,
          next_chunk_internal_link: `/api/2.0/sql/statements/${statementId}/result/chunks/${next}`,
        }
      : {}),
  };
}
