import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { DuckSession } from "../../shared/duck/duck-session.ts";
import { quoteIdentifier, quoteLiteral } from "../../shared/duck/sql-text.ts";

/**
 * The Delta conformance corpus (`shared/conformance/delta/`, beside the clone) and the checks its
 * INDEX.md describes: unordered multiset comparison against `expected/` parquet, DAT version
 * metadata, and the change rows transcribed in `EXPECTED_CDF.txt`.
 */
export const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
export const CORPUS = path.resolve(REPO_ROOT, "../shared/conformance/delta");

export interface CorpusTable {
  /** `group/name`, e.g. `dat-v0.0.2/basic_append`. */
  readonly id: string;
  /** The table root (its `delta/` folder where the case has one). */
  readonly root: string;
  /** The case's `expected/` folder, when it has one. */
  readonly expected?: string;
}

/** Every table folder of the corpus, sorted by id. */
export function corpusTables(): CorpusTable[] {
  const tables: CorpusTable[] = [];
  for (const group of readdirSync(CORPUS, { withFileTypes: true })) {
    if (!group.isDirectory()) continue;
    for (const entry of readdirSync(path.join(CORPUS, group.name), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const folder = path.join(CORPUS, group.name, entry.name);
      const nested = existsSync(path.join(folder, "delta"));
      const expected = path.join(folder, "expected");
      tables.push({
        id: `${group.name}/${entry.name}`,
        root: nested ? path.join(folder, "delta") : folder,
        ...(existsSync(expected) ? { expected } : {}),
      });
    }
  }
  return tables.sort((a, b) => a.id.localeCompare(b.id));
}

/** DAT `expected/<v>/` folders: `latest`, `v0`, `v1`, …, with the version each stands for. */
export function datExpectations(expected: string): { label: string; folder: string; version?: number }[] {
  return readdirSync(expected, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => ({
      label: e.name,
      folder: path.join(expected, e.name),
      ...(e.name === "latest" ? {} : { version: Number(e.name.slice(1)) }),
    }));
}

export interface TableVersionMetadata {
  readonly version: number;
  readonly properties: Record<string, string>;
  readonly min_reader_version: number;
  readonly min_writer_version: number;
}

export function readVersionMetadata(folder: string): TableVersionMetadata {
  return JSON.parse(
    readFileSync(path.join(folder, "table_version_metadata.json"), "utf8"),
  ) as TableVersionMetadata;
}

/**
 * Rows of `actualView` that are not in the expected parquet under `expectedFolder` and vice versa,
 * as multisets. Actual columns are cast to the expected file's types (e.g. our TIMESTAMPTZ to
 * Spark's TIMESTAMP, both UTC), so values compare, not representations.
 */
export async function multisetDifference(
  duck: DuckSession,
  actualView: string,
  expectedFolder: string,
): Promise<{
  actualColumns: string[];
  expectedColumns: string[];
  missing: unknown[];
  unexpected: unknown[];
}> {
  const glob = quoteLiteral(path.join(expectedFolder, "**", "*.parquet"));
  await duck.run(`CREATE OR REPLACE TEMP VIEW expected_rows AS SELECT * FROM read_parquet(${glob})`);
  const expectedColumns = await describe(duck, "expected_rows");
  const actualColumns = (await describe(duck, actualView)).map((c) => c.name);
  const projection = expectedColumns
    .map((c) => `CAST(${quoteIdentifier(c.name)} AS ${c.type}) AS ${quoteIdentifier(c.name)}`)
    .join(", ");
  const actual = `SELECT ${projection} FROM ${quoteIdentifier(actualView)}`;
  const missing = await duck.rows(`SELECT * FROM expected_rows EXCEPT ALL ${actual} LIMIT 5`);
  const unexpected = await duck.rows(`${actual} EXCEPT ALL SELECT * FROM expected_rows LIMIT 5`);
  return { actualColumns, expectedColumns: expectedColumns.map((c) => c.name), missing, unexpected };
}

async function describe(duck: DuckSession, view: string): Promise<{ name: string; type: string }[]> {
  const rows = await duck.rows(`DESCRIBE ${quoteIdentifier(view)}`);
  return rows.map((r) => ({ name: String(r.column_name), type: String(r.column_type) }));
}

/** One `read_cdf_for_table(table, start, end)` call of EXPECTED_CDF.txt and the rows it returns. */
export interface ExpectedChanges {
  readonly from: number;
  readonly to: number | undefined;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

const CDF_CALL = /read_cdf_for_table\("[^"]+",\s*(\d+),\s*(None|\d+)/;

/** Parses the pretty-printed tables of an EXPECTED_CDF.txt. */
export function parseExpectedCdf(text: string): ExpectedChanges[] {
  const out: ExpectedChanges[] = [];
  let current: { from: number; to: number | undefined; columns: string[]; rows: string[][] } | undefined;
  for (const line of text.split("\n")) {
    const call = CDF_CALL.exec(line);
    if (call) {
      current = {
        from: Number(call[1]),
        to: call[2] === "None" ? undefined : Number(call[2]),
        columns: [],
        rows: [],
      };
      out.push(current);
    } else if (current && line.startsWith("|")) {
      const cells = line
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim());
      if (current.columns.length === 0) current.columns = cells;
      else current.rows.push(cells);
    }
  }
  return out;
}

/** A row value as the pretty-printed tables show it: dates as `YYYY-MM-DD`, numbers plain. */
export function renderCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value);
}

/** Sorted row keys, for comparing multisets of rows with order-insensitive equality. */
export function rowKeys(rows: readonly (readonly string[])[]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort();
}
