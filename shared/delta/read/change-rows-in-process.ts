import { parquetMetadata, parquetSchema, type SchemaElement } from "hyparquet";
import { DEFAULT_PARSERS } from "hyparquet/src/convert.js";
import type { AnswerRow } from "../../duck/duck-session.ts";
import { timestampText } from "../../duck/answer-values.ts";
import { ObjectNotFoundError } from "../../object-store/errors.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import { readLeafColumn } from "../log/parquet-leaves.ts";
import { CHECKPOINT_COMPRESSORS, isDecodableCodec } from "../log/parquet-codecs.ts";
import type { PrimitiveType, StructField } from "../table/schema.ts";

/**
 * A change feed's rows read in process, without DuckDB: for a feed of many tiny files (100 one-row
 * commits), where DuckDB's fixed cost of ~0.35 ms a file was most of the feed's time and a Parquet
 * reader (hyparquet, as for checkpoints) decodes such a file in a tenth of it. Only what it reads
 * exactly as DuckDB's SELECT answers it: flat columns of the types below, each file's column of the
 * very type the table's has (no cast to make), no partition columns, small files. Anything else is
 * `undefined`, and the caller reads the feed through DuckDB, the one reference for its rows.
 */

/** Bytes of change files above which DuckDB's scan, parallel and vectorised, is the faster reader. */
export const IN_PROCESS_FEED_BYTES = 1 << 20;

/** Files fetched at once. */
const FETCH_CONCURRENCY = 16;

/** One file of the feed as the reader takes it. */
export interface InProcessChangeFile {
  /** Object key of the data or change file. */
  readonly key: string;
  /** Bytes, from its action; `undefined` when the log does not say. */
  readonly size: number | undefined;
  readonly version: number;
  /** Commit time, milliseconds since the epoch. */
  readonly timestamp: number;
  /** The change type of every row of an `add`/`remove`; `undefined` for a `cdc` file, which holds its own. */
  readonly changeType: string | undefined;
}

/** Whether a Parquet column holds a table type as DuckDB reads it without a cast. */
const STORED_AS: Readonly<Partial<Record<PrimitiveType, (e: SchemaElement) => boolean>>> = {
  long: (e) => e.type === "INT64" && signedInteger(e, 64, "INT_64"),
  integer: (e) => e.type === "INT32" && signedInteger(e, 32, "INT_32"),
  short: (e) => e.type === "INT32" && e.converted_type === "INT_16",
  byte: (e) => e.type === "INT32" && e.converted_type === "INT_8",
  boolean: (e) => e.type === "BOOLEAN" && e.converted_type === undefined && e.logical_type === undefined,
  double: (e) => e.type === "DOUBLE" && e.converted_type === undefined && e.logical_type === undefined,
  float: (e) => e.type === "FLOAT" && e.converted_type === undefined && e.logical_type === undefined,
  string: (e) =>
    e.type === "BYTE_ARRAY" && (e.converted_type === "UTF8" || e.logical_type?.type === "STRING"),
};

function signedInteger(e: SchemaElement, bits: number, converted: string): boolean {
  const logical = e.logical_type;
  const logicalFits =
    logical === undefined || (logical.type === "INTEGER" && logical.bitWidth === bits && logical.isSigned);
  return (e.converted_type === undefined || e.converted_type === converted) && logicalFits;
}

/** Whether the feed of a table with `fields` (none a partition column) can be read in process. */
export function readableInProcess(
  fields: readonly StructField[],
  partitionColumns: readonly string[],
  files: readonly InProcessChangeFile[],
): boolean {
  if (partitionColumns.length > 0) return false;
  if (!fields.every((f) => typeof f.type === "string" && STORED_AS[f.type] !== undefined)) return false;
  let bytes = 0;
  for (const file of files) {
    if (file.size === undefined) return false;
    bytes += file.size;
    if (timestampText(BigInt(file.timestamp) * 1000n) === undefined) return false;
  }
  return bytes <= IN_PROCESS_FEED_BYTES;
}

/**
 * The feed's rows: the files' rows with the feed's three columns, files in the order given (the
 * SELECT's: data files, then change files), `undefined` when a file holds a column unlike the
 * table's. `missing` is the error for files that are gone, given their indexes.
 */
export async function readChangeRowsInProcess(
  store: ObjectStore,
  fields: readonly StructField[],
  files: readonly InProcessChangeFile[],
  missing: (indexes: readonly number[]) => Error,
): Promise<AnswerRow[] | undefined> {
  const ordered = [
    ...files.filter((f) => f.changeType !== undefined),
    ...files.filter((f) => f.changeType === undefined),
  ];
  // A file is read for every version that needs it (added by one, removed by another): each is gone.
  const indexesOf = (key: string) => files.flatMap((f, i) => (f.key === key ? [i] : []));
  const contents = await fetchAll(store, ordered, indexesOf, missing);
  const rows: AnswerRow[] = [];
  for (let i = 0; i < ordered.length; i++) {
    const fileRows = decodeFile(contents[i]!, fields, ordered[i]!);
    if (!fileRows) return undefined;
    for (const row of fileRows) rows.push(row);
  }
  return rows;
}

async function fetchAll(
  store: ObjectStore,
  files: readonly InProcessChangeFile[],
  indexesOf: (key: string) => number[],
  missing: (indexes: readonly number[]) => Error,
): Promise<ArrayBuffer[]> {
  const out: ArrayBuffer[] = [];
  const gone = new Set<number>();
  for (let i = 0; i < files.length; i += FETCH_CONCURRENCY) {
    const batch = files.slice(i, i + FETCH_CONCURRENCY);
    const fetched = await Promise.all(
      batch.map(async ({ key }) => {
        try {
          const bytes = await store.get(key);
          const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
          return (whole ? bytes.buffer : new Uint8Array(bytes).buffer) as ArrayBuffer; // a copy only of a view into a larger buffer
        } catch (error) {
          if (!(error instanceof ObjectNotFoundError)) throw error;
          for (const index of indexesOf(key)) gone.add(index);
          return new ArrayBuffer(0);
        }
      }),
    );
    out.push(...fetched);
  }
  if (gone.size > 0) throw missing([...gone].sort((a, b) => a - b));
  return out;
}

/** The rows of one file, or `undefined` when a column is not stored as the table's type says. */
function decodeFile(
  file: ArrayBuffer,
  fields: readonly StructField[],
  change: InProcessChangeFile,
): AnswerRow[] | undefined {
  const metadata = parquetMetadata(file);
  const tree = parquetSchema(metadata);
  const leaves = new Map(tree.children.map((child) => [child.element.name, child]));
  // A column DuckDB binds by another spelling (names are case-insensitive) is left to DuckDB.
  const names = new Set(fields.map((f) => f.name));
  if (tree.children.some((c) => !names.has(c.element.name) && names.has(lowerMatch(names, c.element.name))))
    return undefined;
  if (tree.children.some((c) => c.children.length > 0 || c.element.repetition_type === "REPEATED"))
    return undefined;
  for (const field of fields) {
    const leaf = leaves.get(field.name);
    if (leaf && !STORED_AS[field.type as PrimitiveType]!(leaf.element)) return undefined;
  }
  const changeTypeLeaf = leaves.get("_change_type");
  if (change.changeType === undefined && !(changeTypeLeaf && STORED_AS.string!(changeTypeLeaf.element)))
    return undefined;
  const version = BigInt(change.version);
  const timestamp = timestampText(BigInt(change.timestamp) * 1000n)!;
  const rows: AnswerRow[] = [];
  const options = { compressors: CHECKPOINT_COMPRESSORS, parsers: DEFAULT_PARSERS };
  for (const group of metadata.row_groups) {
    if (!group.columns.every((c) => c.meta_data && isDecodableCodec(c.meta_data.codec))) return undefined;
    const count = Number(group.num_rows);
    const column = (name: string): unknown[] | undefined => {
      const chunk = group.columns.find(
        (c) => c.meta_data?.path_in_schema.length === 1 && c.meta_data.path_in_schema[0] === name,
      );
      if (!chunk) return undefined;
      const leaf = readLeafColumn(file, tree, chunk, options);
      const values = new Array<unknown>(count).fill(null);
      let at = 0;
      for (let row = 0; row < count; row++) {
        if (leaf.definitionLevels[row] === leaf.maxDefinition) values[row] = leaf.values[at++];
      }
      return values;
    };
    const columns = fields.map((f) => (leaves.has(f.name) ? column(f.name) : undefined));
    const changeTypes = change.changeType === undefined ? column("_change_type") : undefined;
    for (let row = 0; row < count; row++) {
      const out: AnswerRow = {};
      fields.forEach((f, i) => {
        out[f.name] = (columns[i]?.[row] ?? null) as AnswerRow[string];
      });
      out["_change_type"] = change.changeType ?? ((changeTypes?.[row] ?? null) as string | null);
      out["_commit_version"] = version;
      out["_commit_timestamp"] = timestamp;
      rows.push(out);
    }
  }
  return rows;
}

function lowerMatch(names: ReadonlySet<string>, name: string): string {
  const lower = name.toLowerCase();
  for (const candidate of names) if (candidate.toLowerCase() === lower) return candidate;
  return name;
}
