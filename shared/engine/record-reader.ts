import { readFile, writeFile } from "node:fs/promises";
import { quoteIdentifier, quoteLiteral, stringList } from "../duck/sql-text.ts";
import { columnTypeSql } from "../pipeline/column-type.ts";
import { MalformedRecordsError } from "./errors.ts";
import type { Sandbox } from "./sandbox.ts";

/**
 * Reading landed files (json lines, csv, parquet) into the sandbox, separating malformed records from
 * good ones: a JSON line that does not parse or is not an object,
 * a CSV row with the wrong number of columns, a value that does not fit the declared schema. Nothing
 * is dropped: every malformed record lands in the `bad` table with its file, line and error.
 *
 * JSON takes a fast path first: DuckDB's `read_json`, which stops at the first bad line, either as a
 * view the flow's query reads in the same pass (`lazy`) or into a temp table. Only when it fails does
 * a slower pass find every bad line with its exact line number (DuckDB's own messages skip blank
 * lines). A lazy read checks only what the query reads: a value in a column it never selects, or a
 * line past where a LIMIT stopped it, is not checked (nor used). CSV uses DuckDB's reject tables,
 * which report the file line of each rejected row.
 */

export type RecordFormat = "json" | "csv" | "parquet";

export interface LandedFile {
  /** The key under the source prefix, as users know the file. */
  readonly key: string;
  /** Where the engine copied it inside the sandbox folder. */
  readonly localPath: string;
  /**
   * Records in the file (non-blank lines, less a CSV header; parquet rows): settled later where
   * counting them takes reading the file (a linked JSON or CSV file, auto-loader-source.ts).
   */
  readonly records: Promise<number>;
  /** Why the file cannot be read at all (a Parquet file that is not one): it is one malformed record. */
  readonly unreadable?: string;
  /**
   * Only rows `[first, end)` of the file are the batch's (a Parquet file read by row groups,
   * parquet-row-groups.ts): the copy holds nothing else, so nothing else may be read.
   */
  readonly rowRange?: { readonly first: number; readonly end: number };
}

export interface RecordReadRequest {
  /** The flow reading, for errors. */
  readonly flow: string;
  readonly format: RecordFormat;
  /** Declared columns and DuckDB types, in order; detected from the files when absent. */
  readonly schema?: Readonly<Record<string, string>>;
  /** Temp table names to create. */
  readonly goodTable: string;
  readonly badTable: string;
  /**
   * JSON only: register the good records as a view over the files without checking them first, so
   * the query reads them in one pass. A malformed record then surfaces as an error of the query
   * (`isMalformedInputError`), and the caller reads again without `lazy`.
   */
  readonly lazy?: boolean;
}

/** Whether a query failed on a malformed record of a lazily read JSON batch. */
export function isMalformedInputError(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (/Malformed JSON|JSON transform error/.test(current.message)) return true;
  }
  return false;
}

/** Columns of the bad-records table (and of a `_quarantine` table, with the batch's own columns). */
export const BAD_RECORD_COLUMNS = "file VARCHAR, line BIGINT, record VARCHAR, error VARCHAR";

/** Reads `files` into `goodTable` and `badTable`; returns how many records were malformed. */
export async function readRecords(
  sandbox: Sandbox,
  files: readonly LandedFile[],
  given: RecordReadRequest,
): Promise<number> {
  const request = given.schema ? { ...given, schema: renderedSchema(given.schema) } : given;
  const bad = quoteIdentifier(request.badTable);
  const badTable = `CREATE OR REPLACE TEMP TABLE ${bad} (${BAD_RECORD_COLUMNS})`;
  if (request.format === "json" && request.lazy) {
    // A lazy read finds no bad record before the query runs: its bad table, empty, and its view in
    // one call into DuckDB (a round trip is most of what such a statement costs).
    await sandbox.run(`${badTable};\n${lazyJsonView(files, request)}`);
    return 0;
  }
  await sandbox.run(badTable);
  if (request.format === "csv") await readCsv(sandbox, files, request);
  else if (request.format === "parquet") await readParquet(sandbox, files, request);
  else await readJson(sandbox, files, request);
  const [row] = await sandbox.rows(`SELECT count(*)::INTEGER AS n FROM ${bad}`);
  return Number(row?.["n"] ?? 0);
}

/**
 * The declared types as rendered from their parse, never the definition's text: the SQL below
 * splices types where DuckDB takes no parameter (`CAST(… AS type)`).
 */
function renderedSchema(schema: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(schema).map(([name, type]) => [name, columnTypeSql(type)]));
}

async function readJson(
  sandbox: Sandbox,
  files: readonly LandedFile[],
  request: RecordReadRequest,
): Promise<void> {
  const good = quoteIdentifier(request.goodTable);
  const paths = files.map((f) => f.localPath);
  await sandbox.run(`DROP VIEW IF EXISTS ${good}`);
  try {
    await sandbox.run(
      `CREATE OR REPLACE TEMP TABLE ${good} AS SELECT * FROM ${jsonScan(paths, request.schema)}`,
    );
    return;
  } catch (fastPathError) {
    const found = await findBadJsonLines(sandbox, files, request);
    if (found === 0) throw fastPathError;
  }
}

/** A lazy JSON read's statements: the good table as a view over the files, nothing read yet. */
function lazyJsonView(files: readonly LandedFile[], request: RecordReadRequest): string {
  const good = quoteIdentifier(request.goodTable);
  const scan = jsonScan(
    files.map((f) => f.localPath),
    request.schema,
  );
  return `DROP VIEW IF EXISTS ${good};\nCREATE TEMP VIEW ${good} AS SELECT * FROM ${scan}`;
}

function jsonScan(paths: readonly string[], schema: Readonly<Record<string, string>> | undefined): string {
  const columns = schema
    ? `columns = {${Object.entries(schema)
        .map(([name, type]) => `${quoteLiteral(name)}: ${quoteLiteral(type)}`)
        .join(", ")}}`
    : "union_by_name = true";
  return `read_json(${stringList(paths)}, format = 'newline_delimited', ${columns})`;
}

/**
 * The slow pass: numbers every non-blank line, lets DuckDB judge each one (valid JSON, an object,
 * each declared column castable), puts the bad ones in the bad table and re-reads the good ones.
 */
async function findBadJsonLines(
  sandbox: Sandbox,
  files: readonly LandedFile[],
  request: RecordReadRequest,
): Promise<number> {
  const numbered: string[] = [];
  const lines = new Map<string, string>();
  for (const file of files) {
    const text = await readFile(file.localPath, "utf8");
    text.split(/\r?\n/).forEach((line, i) => {
      if (line.trim() === "") return;
      numbered.push(JSON.stringify({ f: file.key, l: i + 1, r: line }));
      lines.set(`${file.key}\n${i + 1}`, line);
    });
  }
  const numberedPath = await sandbox.newPath(".ndjson");
  await writeFile(numberedPath, numbered.join("\n") + "\n");
  const checks = Object.entries(request.schema ?? {})
    .filter(([, type]) => type.toUpperCase() !== "VARCHAR")
    .map(([name, type]) => {
      const value = `json_extract(j, ${quoteLiteral(`$."${name}"`)})`;
      return `WHEN ${value} IS NOT NULL AND json_type(${value}) <> 'NULL' AND TRY_CAST(${value} AS ${type}) IS NULL THEN ${quoteLiteral(`column ${name}: `)} || ${value}::VARCHAR || ${quoteLiteral(` does not fit ${type}`)}`;
    });
  const checked = `__ebb_checked_${request.goodTable}`;
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(checked)} AS SELECT f, l, r, j, CASE ` +
      `WHEN j IS NULL THEN 'not valid JSON' WHEN json_type(j) <> 'OBJECT' THEN 'not a JSON object' ` +
      `${checks.join(" ")} ELSE NULL END AS error FROM (SELECT f, l, r, TRY_CAST(r AS JSON) AS j FROM ` +
      `read_json(${quoteLiteral(numberedPath)}, format = 'newline_delimited', columns = {f: 'VARCHAR', l: 'BIGINT', r: 'VARCHAR'}))`,
  );
  await sandbox.run(
    `INSERT INTO ${quoteIdentifier(request.badTable)} SELECT f, l, r, error FROM ${quoteIdentifier(checked)} WHERE error IS NOT NULL ORDER BY f, l`,
  );
  const badRows = await sandbox.rows(`SELECT file AS f, line AS l FROM ${quoteIdentifier(request.badTable)}`);
  const good = quoteIdentifier(request.goodTable);
  if (request.schema) {
    const columns = Object.entries(request.schema).map(([name, type]) => {
      const path = quoteLiteral(`$."${name}"`);
      const value =
        type.toUpperCase() === "VARCHAR"
          ? `json_extract_string(j, ${path})`
          : `CAST(json_extract(j, ${path}) AS ${type})`;
      return `${value} AS ${quoteIdentifier(name)}`;
    });
    await sandbox.run(
      `CREATE OR REPLACE TEMP TABLE ${good} AS SELECT ${columns.join(", ")} FROM ${quoteIdentifier(checked)} WHERE error IS NULL ORDER BY f, l`,
    );
  } else {
    for (const row of badRows) lines.delete(`${String(row["f"])}\n${String(row["l"])}`);
    const goodPath = await sandbox.newPath(".ndjson");
    await writeFile(goodPath, [...lines.values()].join("\n") + "\n");
    await sandbox.run(
      `CREATE OR REPLACE TEMP TABLE ${good} AS SELECT * FROM ${jsonScan([goodPath], undefined)}`,
    );
  }
  await sandbox.run(`DROP TABLE ${quoteIdentifier(checked)}`);
  return badRows.length;
}

async function readCsv(
  sandbox: Sandbox,
  files: readonly LandedFile[],
  request: RecordReadRequest,
): Promise<void> {
  const rejects = `__ebb_rejects_${request.goodTable}`;
  const scans = `__ebb_scans_${request.goodTable}`;
  // Without a declared schema the first file's header and sniffed types apply to every file of the
  // batch: DuckDB cannot keep rejected rows while it unions files by column name.
  const columns = request.schema
    ? `columns = {${Object.entries(request.schema)
        .map(([name, type]) => `${quoteLiteral(name)}: ${quoteLiteral(type)}`)
        .join(", ")}}, `
    : "";
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(request.goodTable)} AS SELECT * FROM read_csv(${stringList(files.map((f) => f.localPath))}, ` +
      `header = true, ${columns}store_rejects = true, rejects_table = ${quoteLiteral(rejects)}, rejects_scan = ${quoteLiteral(scans)})`,
  );
  await sandbox.run(
    `INSERT INTO ${quoteIdentifier(request.badTable)} SELECT k.key, e.line, e.csv_line, e.error_type || ': ' || e.error_message ` +
      `FROM ${quoteIdentifier(rejects)} e JOIN ${quoteIdentifier(scans)} s ON e.scan_id = s.scan_id AND e.file_id = s.file_id ` +
      `JOIN (VALUES ${files.map((f) => `(${quoteLiteral(f.localPath)}, ${quoteLiteral(f.key)})`).join(", ")}) k(local, key) ON k.local = s.file_path ` +
      `ORDER BY k.key, e.line`,
  );
  await sandbox.run(`DROP TABLE IF EXISTS ${quoteIdentifier(rejects)}`);
  await sandbox.run(`DROP TABLE IF EXISTS ${quoteIdentifier(scans)}`);
}

async function readParquet(
  sandbox: Sandbox,
  files: readonly LandedFile[],
  request: RecordReadRequest,
): Promise<void> {
  const unreadable = files.filter((file) => file.unreadable !== undefined);
  if (unreadable.length > 0) {
    await sandbox.run(
      `INSERT INTO ${quoteIdentifier(request.badTable)} VALUES ${unreadable
        .map((file) => `(${quoteLiteral(file.key)}, NULL, NULL, ${quoteLiteral(file.unreadable ?? "")})`)
        .join(", ")}`,
    );
  }
  const readable = files.filter((file) => file.unreadable === undefined);
  const good = quoteIdentifier(request.goodTable);
  if (readable.length === 0) {
    // Nothing to read the columns from: the declared ones, or no batch at all.
    if (!request.schema) throw new MalformedRecordsError(request.flow, unreadableRecords(unreadable));
    const columns = Object.entries(request.schema).map(([name, type]) => `${quoteIdentifier(name)} ${type}`);
    await sandbox.run(`CREATE OR REPLACE TEMP TABLE ${good} (${columns.join(", ")})`);
    return;
  }
  // Views, never temp tables: the batch's rows stream from its files into the query's output once,
  // instead of first filling the memory limit and then the spill folder with a copy of the batch.
  const read = `read_parquet(${stringList(readable.map((f) => f.localPath))}, union_by_name = true, filename = '__ebb_file', file_row_number = true)`;
  // A batch over part of a file is that one file: the filter keeps DuckDB to its row groups.
  const range = readable.length === 1 ? readable[0]!.rowRange : undefined;
  const scan = range
    ? `(SELECT * FROM ${read} WHERE file_row_number >= ${range.first} AND file_row_number < ${range.end})`
    : read;
  if (!request.schema) {
    await sandbox.run(
      `CREATE OR REPLACE TEMP VIEW ${good} AS SELECT * EXCLUDE (__ebb_file, file_row_number) FROM ${scan}`,
    );
    return;
  }
  const entries = Object.entries(request.schema);
  const misfit = entries.map(
    ([name, type]) =>
      `WHEN ${quoteIdentifier(name)} IS NOT NULL AND TRY_CAST(${quoteIdentifier(name)} AS ${type}) IS NULL THEN ${quoteLiteral(`column ${name}: `)} || ${quoteIdentifier(name)}::VARCHAR || ${quoteLiteral(` does not fit ${type}`)}`,
  );
  const checked = `(SELECT *, CASE ${misfit.join(" ")} ELSE NULL END AS __ebb_error FROM ${scan})`;
  await sandbox.run(
    `INSERT INTO ${quoteIdentifier(request.badTable)} SELECT k.key, c.file_row_number + 1, NULL, c.__ebb_error FROM ${checked} c ` +
      `JOIN (VALUES ${readable.map((f) => `(${quoteLiteral(f.localPath)}, ${quoteLiteral(f.key)})`).join(", ")}) k(local, key) ON k.local = c.__ebb_file ` +
      `WHERE c.__ebb_error IS NOT NULL`,
  );
  const casts = entries.map(
    ([name, type]) => `CAST(${quoteIdentifier(name)} AS ${type}) AS ${quoteIdentifier(name)}`,
  );
  await sandbox.run(
    `CREATE OR REPLACE TEMP VIEW ${good} AS SELECT ${casts.join(", ")} FROM ${checked} WHERE __ebb_error IS NULL`,
  );
}

function unreadableRecords(files: readonly LandedFile[]) {
  return files.map((file) => ({ file: file.key, line: 0, error: file.unreadable ?? "" }));
}
