import { writeFile } from "node:fs/promises";
import { quoteIdentifier, quoteLiteral } from "../duck/sql-text.ts";
import { columnTypeSql } from "../pipeline/column-type.ts";
import { BAD_RECORD_COLUMNS } from "./record-reader.ts";
import type { Sandbox } from "./sandbox.ts";

/**
 * A batch of event-stream records (Kafka, Kinesis) into the sandbox: the records go into one
 * newline-delimited JSON file (payloads as text, or base64 for bytes), DuckDB reads it once, decodes
 * the payload and splits good records (`goodTable`) from malformed ones (`badTable`, with where the
 * record came from as `file` and its position as `line`): a payload that is not JSON, not a JSON
 * object, or a field that does not fit its declared type.
 */

export type PayloadFormat = "json" | "string" | "bytes";

export interface EventColumn {
  readonly name: string;
  /** Its DuckDB type as written to the file. */
  readonly type: string;
  /** The SQL that turns the written value into the column (the column name by default). */
  readonly select?: string;
}

export interface EventBatchLayout {
  /** The payload's column name (`value`, `data`). */
  readonly payload: string;
  readonly format: PayloadFormat;
  /** Declared fields of a JSON payload: the column is then a STRUCT of them. */
  readonly schema?: Readonly<Record<string, string>>;
  /** The other columns, in order; the payload column goes after the first. */
  readonly columns: readonly EventColumn[];
}

export interface EventRow {
  readonly payload: Uint8Array | null;
  readonly values: Readonly<Record<string, unknown>>;
  /** Where it came from and its position there, for a malformed record's `file` and `line`. */
  readonly where: string;
  readonly line: number;
}

/** Writes `rows` and creates `goodTable` and `badTable`; returns the number of malformed records. */
export async function loadEventRows(
  sandbox: Sandbox,
  layout: EventBatchLayout,
  rows: readonly EventRow[],
  goodTable: string,
  badTable: string,
): Promise<number> {
  const path = await sandbox.newPath(".ndjson");
  const lines = rows.map((row) =>
    JSON.stringify({
      ...row.values,
      __ebb_where: row.where,
      __ebb_line: row.line,
      __ebb_payload:
        row.payload === null
          ? null
          : Buffer.from(row.payload.buffer, row.payload.byteOffset, row.payload.byteLength).toString(
              layout.format === "bytes" ? "base64" : "utf8",
            ),
    }),
  );
  await writeFile(path, lines.length > 0 ? lines.join("\n") + "\n" : "");
  const read = [
    ...layout.columns.map((c) => [c.name, c.type] as const),
    ["__ebb_where", "VARCHAR"],
    ["__ebb_line", "BIGINT"],
    ["__ebb_payload", "VARCHAR"],
  ]
    .map(([name, type]) => `${quoteLiteral(name)}: ${quoteLiteral(type)}`)
    .join(", ");
  const decoded = decodePayload(layout);
  const raw = "__ebb_raw_events";
  // An empty file has no rows to infer from; the declared columns make the read well-typed anyway.
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${raw} AS SELECT *, ${decoded.json} AS __ebb_json FROM read_json(${quoteLiteral(path)}, format = 'newline_delimited', columns = {${read}})`,
  );
  const [first, ...rest] = layout.columns.map(
    (c) => `${c.select ?? quoteIdentifier(c.name)} AS ${quoteIdentifier(c.name)}`,
  );
  const columns = [first, `${decoded.value} AS ${quoteIdentifier(layout.payload)}`, ...rest].filter(Boolean);
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(goodTable)} AS SELECT ${columns.join(", ")} FROM ${raw} WHERE ${decoded.error} IS NULL`,
  );
  await sandbox.run(`CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(badTable)} (${BAD_RECORD_COLUMNS})`);
  await sandbox.run(
    `INSERT INTO ${quoteIdentifier(badTable)} SELECT __ebb_where, __ebb_line, __ebb_payload, ${decoded.error} FROM ${raw} WHERE ${decoded.error} IS NOT NULL`,
  );
  const [bad] = await sandbox.rows(`SELECT count(*)::INTEGER AS n FROM ${quoteIdentifier(badTable)}`);
  await sandbox.run(`DROP TABLE ${raw}`);
  return Number(bad?.["n"] ?? 0);
}

/** The payload column's SQL, its parsed JSON, and the SQL of the error that makes a record bad. */
function decodePayload(layout: EventBatchLayout): { value: string; json: string; error: string } {
  if (layout.format === "string")
    return { value: "__ebb_payload", json: "NULL::JSON", error: "NULL::VARCHAR" };
  if (layout.format === "bytes")
    return { value: "from_base64(__ebb_payload)", json: "NULL::JSON", error: "NULL::VARCHAR" };
  const json = "TRY_CAST(__ebb_payload AS JSON)";
  const invalid = "WHEN __ebb_payload IS NOT NULL AND __ebb_json IS NULL THEN 'not valid JSON'";
  if (!layout.schema) return { value: "__ebb_json", json, error: `(CASE ${invalid} ELSE NULL END)` };
  // Declared types are rendered from their parse, never pasted as written.
  const fields = Object.entries(layout.schema).map(([name, type]) => [name, columnTypeSql(type)] as const);
  const misfits = fields
    .filter(([, type]) => type.toUpperCase() !== "VARCHAR")
    .map(([name, type]) => {
      const value = `json_extract(__ebb_json, ${quoteLiteral(`$."${name}"`)})`;
      return `WHEN ${value} IS NOT NULL AND json_type(${value}) <> 'NULL' AND TRY_CAST(${value} AS ${type}) IS NULL THEN ${quoteLiteral(`field ${name}: `)} || ${value}::VARCHAR || ${quoteLiteral(` does not fit ${type}`)}`;
    });
  const error = `(CASE ${invalid} WHEN __ebb_json IS NOT NULL AND json_type(__ebb_json) <> 'OBJECT' THEN 'not a JSON object' ${misfits.join(" ")} ELSE NULL END)`;
  const members = fields.map(([name, type]) => {
    const path = quoteLiteral(`$."${name}"`);
    const value =
      type.toUpperCase() === "VARCHAR"
        ? `json_extract_string(__ebb_json, ${path})`
        : `CAST(json_extract(__ebb_json, ${path}) AS ${type})`;
    return `${quoteIdentifier(name)} := ${value}`;
  });
  // A null payload (a tombstone) is a NULL struct, not a struct of NULLs.
  return {
    value: `CASE WHEN __ebb_json IS NULL THEN NULL ELSE struct_pack(${members.join(", ")}) END`,
    json,
    error,
  };
}
