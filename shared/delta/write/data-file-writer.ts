import { randomUUID } from "node:crypto";
import path from "node:path";
import type { DuckSession } from "../../duck/duck-session.ts";
import type { ScratchFolder } from "../../duck/scratch-folder.ts";
import { quoteIdentifier, quoteLiteral } from "../../duck/sql-text.ts";
import type { ObjectStore } from "../../object-store/object-store.ts";
import type { AddCdcFile, AddFile } from "../log/actions.ts";
import { newChangeDataFileKey, newDataFileKey, toLogPath } from "../log/data-file-paths.ts";
import { SchemaMismatchError } from "../errors.ts";
import { copyThroughPipes } from "./piped-copy.ts";
import { uploadStreamedFile } from "./streamed-file-upload.ts";
import { encodeFileStats } from "../log/stats-json.ts";
import { parquetStatsQuery, statsColumns, toFileStats } from "./file-stats.ts";
import { footerFileStats } from "./footer-stats.ts";
import { assertNoNullsByScan, assertNoNullsInFiles, requiredColumnsNeedingScan } from "./not-null-check.ts";
import type { DeltaType, StructType } from "../table/schema.ts";

/**
 * Writes rows, given as DuckDB SQL over the session, into a table's parquet files: one file per
 * partition value combination (more when it passes the target file size), `COPY ... (FORMAT parquet, COMPRESSION snappy)` into
 * pipes the engine drains, each file uploaded through the object store while DuckDB writes it. Partition columns are not stored in the files; their
 * values go to `partitionValues`, serialized as PROTOCOL.md "Partition Value Serialization" says
 * (timestamps as ISO-8601 UTC, its recommended form).
 */

export interface FileWriteContext {
  readonly store: ObjectStore;
  readonly duck: DuckSession;
  readonly scratch: ScratchFolder;
  readonly clock: () => number;
  /** Size at which a write starts a new file. @default 128 MiB */
  readonly targetFileSizeBytes?: number;
  /** Runs after each data file is uploaded, before the next one (crash injection). */
  readonly afterFileUploaded?: (key: string) => Promise<void>;
  /** Starts each data file's name after `part-` (a compaction names its output by its input). */
  readonly fileNamePrefix?: string;
}

/** Files of about this size keep uploads whole and scans parallel. */
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 128 * 1024 * 1024;

export interface TableLayout {
  readonly schema: StructType;
  readonly partitionColumns: readonly string[];
  /** Parquet codec for DuckDB's COPY (`delta.parquet.compression.codec`). @default "snappy" */
  readonly compression?: string;
  /** Leading data columns with stats (`delta.dataSkippingNumIndexedCols`). @default 32 */
  readonly indexedColumns?: number;
  /** Size at which a write starts a new file (`delta.targetFileSize`), unless the write sets its own. @default 128 MiB */
  readonly targetFileSizeBytes?: number;
}

/** The column of change data files that says what a row is (PROTOCOL.md "Change Data Files"). */
export const CHANGE_TYPE_COLUMN = "_change_type";

/** Writes the rows of `rowsSql` (all schema columns) as data files; their `add` actions. */
export async function writeDataFiles(
  context: FileWriteContext,
  layout: TableLayout,
  rowsSql: string,
): Promise<AddFile[]> {
  const columns = statsColumns(layout.schema, layout.partitionColumns, layout.indexedColumns);
  const unchecked = requiredColumnsNeedingScan(layout.schema, layout.partitionColumns, columns);
  await assertNoNullsByScan(context.duck, rowsSql, unchecked);
  const written = await writeFiles(context, layout, rowsSql, false);
  // The files stay orphans (VACUUM collects them) if this fails: nothing is committed.
  assertNoNullsInFiles(layout.schema, written);
  return written.map(({ key, size, partitionValues, stats }) => ({
    path: toLogPath(key),
    partitionValues,
    size,
    modificationTime: context.clock(),
    dataChange: true,
    stats: encodeFileStats(stats),
  }));
}

/** Writes change rows (schema columns plus `_change_type`) as `_change_data/` files; their `cdc` actions. */
export async function writeChangeDataFiles(
  context: FileWriteContext,
  layout: TableLayout,
  changesSql: string,
): Promise<AddCdcFile[]> {
  const written = await writeFiles(context, layout, changesSql, true);
  return written.map(({ key, size, partitionValues }) => ({
    path: toLogPath(key),
    partitionValues,
    size,
    dataChange: false,
  }));
}

interface WrittenFile {
  readonly key: string;
  readonly size: number;
  readonly partitionValues: Record<string, string | null>;
  readonly stats: ReturnType<typeof toFileStats>;
}

let tempCounter = 0;

async function writeFiles(
  context: FileWriteContext,
  layout: TableLayout,
  rowsSql: string,
  changeData: boolean,
): Promise<WrittenFile[]> {
  const { partitionColumns, schema } = layout;
  assertVoidWritable(schema);
  // A void column holds only nulls and is left out of data files (PROTOCOL.md "Void Type").
  const dataColumns = schema.fields
    .filter((f) => !partitionColumns.includes(f.name) && f.type !== "void")
    .map((f) => f.name);
  const fileColumns = [...dataColumns, ...(changeData ? [CHANGE_TYPE_COLUMN] : [])]
    .map(quoteIdentifier)
    .join(", ");
  if (partitionColumns.length === 0) {
    return writePartitionFiles(context, layout, `SELECT ${fileColumns} FROM (${rowsSql})`, {}, changeData);
  }
  // Materialize once, then one COPY per partition value combination.
  const staged = `__ebb_partitioned_${process.pid}_${tempCounter++}`;
  await context.duck.run(`CREATE TEMP TABLE ${staged} AS ${rowsSql}`);
  try {
    const serialized = partitionColumns.map((name) =>
      serializePartitionValueSql(typeOf(schema, name), quoteIdentifier(name)),
    );
    const groups = await context.duck.rows(
      `SELECT DISTINCT ${serialized.map((expr, i) => `${expr} AS p${i}`).join(", ")} FROM ${staged}`,
    );
    const files: WrittenFile[] = [];
    for (const group of groups) {
      const values = partitionColumns.map((_, i) =>
        group[`p${i}`] === null ? null : String(group[`p${i}`]),
      );
      const where = serialized
        .map(
          (expr, i) =>
            `${expr} IS NOT DISTINCT FROM ${values[i] === null ? "NULL" : quoteLiteral(values[i]!)}`,
        )
        .join(" AND ");
      const partitionValues = Object.fromEntries(partitionColumns.map((name, i) => [name, values[i]!]));
      const fileSql = `SELECT ${fileColumns} FROM ${staged} WHERE ${where}`;
      files.push(...(await writePartitionFiles(context, layout, fileSql, partitionValues, changeData)));
    }
    return files;
  } finally {
    await context.duck.run(`DROP TABLE IF EXISTS ${staged}`);
  }
}

/**
 * One COPY of `fileSql` whose files are uploaded as DuckDB writes them (`piped-copy.ts`): DuckDB
 * starts a new file whenever one passes the target size (checked at row-group boundaries), each
 * file's bytes go up in parts while it is written (`streamed-file-upload.ts`), and DuckDB waits while
 * an upload lags. So the batch's output takes no room in the temporary folder but a footer at a time,
 * whatever its size and however slow the store. A file uploaded but not committed (the COPY or the
 * batch fails later) is an orphan VACUUM removes.
 */
async function writePartitionFiles(
  context: FileWriteContext,
  layout: TableLayout,
  fileSql: string,
  partitionValues: Record<string, string | null>,
  changeData: boolean,
): Promise<WrittenFile[]> {
  const folder = path.join(context.scratch.dir, `write-${randomUUID()}`);
  const targetSize =
    context.targetFileSizeBytes ?? layout.targetFileSizeBytes ?? DEFAULT_TARGET_FILE_SIZE_BYTES;
  const columns = statsColumns(layout.schema, layout.partitionColumns, layout.indexedColumns);
  // Opened only for a footer the in-process decoder hands back (footer-stats.ts).
  let footers: DuckSession | undefined;
  const written: (WrittenFile & { readonly order: number })[] = [];
  try {
    await copyThroughPipes({
      folder,
      copy: () =>
        context.duck.run(
          `COPY (${fileSql}) TO ${quoteLiteral(folder)} (FORMAT parquet, ` +
            `COMPRESSION ${layout.compression ?? "snappy"}, FILE_SIZE_BYTES ${Math.max(1, Math.floor(targetSize))}, ` +
            `OVERWRITE_OR_IGNORE true)`,
        ),
      interrupt: () => context.duck.interrupt(),
      take: async (order, bytes) => {
        const key = changeData
          ? newChangeDataFileKey(layout.partitionColumns, partitionValues)
          : newDataFileKey(
              layout.partitionColumns,
              partitionValues,
              context.fileNamePrefix ? `${context.fileNamePrefix}-${randomUUID()}` : randomUUID(),
            );
        const uploaded = await uploadStreamedFile({
          bytes,
          store: context.store,
          key,
          footerPath: path.join(context.scratch.dir, `footer-${randomUUID()}.parquet`),
          readFooter: async (footerPath) => {
            footers ??= await context.duck.sibling();
            const [row] = await footers.rows(parquetStatsQuery(footerPath, columns));
            return toFileStats(row!, columns);
          },
          decodeFooter: (footer) => footerFileStats(footer, columns),
        });
        if (!uploaded) return;
        written.push({ key, size: uploaded.size, partitionValues, stats: uploaded.stats, order });
        await context.afterFileUploaded?.(key);
      },
    });
    return written.sort((a, b) => a.order - b.order).map(({ order: _, ...file }) => file);
  } finally {
    footers?.close();
  }
}

/**
 * PROTOCOL.md "Void Type": writers reject new data files when a void sits inside an array or map, a
 * struct has only void fields, or every column is void. Ebb also leaves out void only at the top
 * level, so a void nested in a struct is refused too.
 */
function assertVoidWritable(schema: StructType): void {
  if (schema.fields.every((f) => f.type === "void")) {
    throw new SchemaMismatchError("every column of the table is void: give one a type before writing");
  }
  const nestedVoid = (type: DeltaType): boolean => {
    if (typeof type === "string") return type === "void";
    if (type.type === "struct") return type.fields.some((f) => nestedVoid(f.type));
    if (type.type === "array") return nestedVoid(type.elementType);
    if (type.type === "map") return nestedVoid(type.keyType) || nestedVoid(type.valueType);
    return false;
  };
  const column = schema.fields.find((f) => typeof f.type !== "string" && nestedVoid(f.type));
  if (column) {
    throw new SchemaMismatchError(
      `column ${column.name} has a void type nested inside it: give the nested field a type before writing`,
    );
  }
}

function typeOf(schema: StructType, column: string): DeltaType {
  const field = schema.fields.find((f) => f.name === column);
  if (!field) throw new SchemaMismatchError(`partition column ${column} is not in the schema`);
  return field.type;
}

/**
 * SQL turning a column value into its partition string (PROTOCOL.md "Partition Value
 * Serialization"); NULL stays NULL.
 */
export function serializePartitionValueSql(type: DeltaType, column: string): string {
  // An empty string reads back as null (PROTOCOL.md), so it is written as null.
  return `NULLIF(${serializedPartitionValue(type, column)}, '')`;
}

function serializedPartitionValue(type: DeltaType, column: string): string {
  if (typeof type !== "string") {
    if (type.type === "decimal") return `CAST(${column} AS VARCHAR)`;
    throw new SchemaMismatchError(`a ${type.type} column cannot be a partition column`);
  }
  switch (type) {
    case "date":
      return `strftime(${column}, '%Y-%m-%d')`;
    case "timestamp":
      return `strftime(timezone('UTC', ${column}), '%Y-%m-%dT%H:%M:%S.%fZ')`;
    case "timestamp_ntz":
      return `strftime(${column}, '%Y-%m-%d %H:%M:%S.%f')`;
    case "binary":
      throw new SchemaMismatchError(`a binary column cannot be a partition column in Ebb`);
    case "float":
    case "double":
      // Java's spelling (Double.toString), as Spark and Delta write it: `1.0E20`, not DuckDB's `1e+20`.
      return (
        `CASE WHEN isnan(${column}) THEN 'NaN' WHEN ${column} = 'infinity'::DOUBLE THEN 'Infinity' ` +
        `WHEN ${column} = '-infinity'::DOUBLE THEN '-Infinity' ELSE ${javaNumberSql(column)} END`
      );
    default:
      return `CAST(${column} AS VARCHAR)`;
  }
}

/**
 * A finite float or double as Java's `Double.toString` / `Float.toString` spell it (what Spark's CAST
 * to STRING and so its partition folders give): the shortest digits that read back as the value
 * (DuckDB's own text has the same digits), in plain notation from 10^-3 up to 10^7 with at least one
 * digit after the point (`100.0`, `0.001`), else as `d.dddE±n` (`1.0E20`, `1.5E-7`); `-0.0` keeps
 * its sign.
 */
function javaNumberSql(column: string): string {
  const text = `CAST(${column} AS VARCHAR)`;
  const unsigned = `ltrim(${text}, '-')`;
  const sign = `CASE WHEN starts_with(${text}, '-') THEN '-' ELSE '' END`;
  const mantissa = `split_part(${unsigned}, 'e', 1)`;
  const shift = `CASE WHEN contains(${unsigned}, 'e') THEN CAST(split_part(${unsigned}, 'e', 2) AS INTEGER) ELSE 0 END`;
  const all = `replace(${mantissa}, '.', '')`;
  const significant = `ltrim(${all}, '0')`;
  // The digits without leading or trailing zeros, and the power of ten of the first one.
  const digits = `rtrim(${significant}, '0')`;
  const power = `(${shift} + length(split_part(${mantissa}, '.', 1)) - 1 - (length(${all}) - length(${significant})))`;
  const rest = (from: string) =>
    `CASE WHEN length(${digits}) >= ${from} THEN substr(${digits}, ${from}) ELSE '0' END`;
  const plain =
    `CASE WHEN ${power} < 0 THEN '0.' || repeat('0', -${power} - 1) || ${digits} ` +
    `ELSE left(${digits} || repeat('0', ${power} + 1), ${power} + 1) || '.' || ${rest(`${power} + 2`)} END`;
  const scientific = `left(${digits}, 1) || '.' || ${rest("2")} || 'E' || CAST(${power} AS VARCHAR)`;
  return (
    `${sign} || CASE WHEN ${digits} = '' THEN '0.0' ` +
    `WHEN ${power} BETWEEN -3 AND 6 THEN ${plain} ELSE ${scientific} END`
  );
}
