import { quoteLiteral } from "../duck/sql-text.ts";
import { ObjectNotFoundError } from "../object-store/errors.ts";
import { mapInParallel } from "../object-store/map-in-parallel.ts";
import { listAll, type ObjectStore } from "../object-store/object-store.ts";
import { compareKeys } from "../object-store/object-key.ts";
import { PlannedFileGoneError } from "./errors.ts";
import { countFileNonBlankLines, countNonBlankLines } from "./line-count.ts";
import type { LandedFile, RecordFormat } from "./record-reader.ts";
import type { Sandbox } from "./sandbox.ts";

/**
 * The `auto_loader` source: files landing under a prefix, each read exactly once. Its offset is the
 * set of files processed (`file-set-state.ts`), not a position in the listing, so a file whose key
 * sorts before ones already processed (a late upload) is still picked up, at the next listing that
 * reaches it (incremental-listing.ts).
 */

/** Files per batch when the flow sets no `max_files_per_batch` (Databricks' `maxFilesPerTrigger`). */
export const DEFAULT_MAX_FILES_PER_BATCH = 1000;

/** Names Spark and Databricks treat as hidden (`_SUCCESS`, `.part.crc`): never data. */
function isHidden(key: string): boolean {
  return key.split("/").some((segment) => segment.startsWith("_") || segment.startsWith("."));
}

/** The next batch's files (pure): the unprocessed keys in key order, at most `maxFiles`. */
export function planFileBatch(
  listed: Iterable<string>,
  processed: ReadonlySet<string>,
  maxFiles: number,
): string[] {
  const fresh = [...listed].filter((key) => !processed.has(key) && !isHidden(key)).sort(compareKeys);
  return fresh.slice(0, maxFiles);
}

/**
 * Every key under the source prefix (after `startAfter`, when given: an incremental listing), with
 * its size in bytes (what a batch's byte bound counts).
 */
export async function listSourceFiles(
  store: ObjectStore,
  startAfter?: string,
): Promise<Map<string, ListedFile>> {
  const files = new Map<string, ListedFile>();
  for await (const info of listAll(store, "", startAfter === undefined ? {} : { startAfter }))
    if (info.size > 0 || !info.key.endsWith("/"))
      files.set(info.key, { size: info.size, lastModified: info.lastModified });
  return files;
}

/** A source file as listed: its bytes, and when it was written (epoch ms; its age in the backlog). */
export interface ListedFile {
  readonly size: number;
  readonly lastModified: number;
}

/** Files landed at once: a local folder's file is a link (microseconds), another store's a round trip. */
const LANDING_CONCURRENCY = 16;

/** Landed JSON and CSV files read at once to count their lines (each is held whole while counted). */
const COUNTING_CONCURRENCY = 4;

/** Where landed files come from: the flow and dataset an error names, and the source location. */
export interface FileOrigin {
  readonly flow: string;
  readonly dataset: string;
  readonly location: string;
}

/**
 * Puts `keys` into the sandbox folder, in order (a local folder's files linked, other stores' copied).
 * Each file's records are counted as it lands where its bytes pass through the process (another
 * store's, a Parquet footer read by DuckDB); a linked JSON or CSV file's lines are counted after
 * landing, off the caller's path: its `records` settle while the batch's query runs, which reads
 * the same file (the count took ~100 ms of a 1M-row first update on the main thread before the query
 * could start). A file gone since it was listed is a `PlannedFileGoneError`.
 */
export async function landFiles(
  store: ObjectStore,
  sandbox: Sandbox,
  keys: readonly string[],
  origin: FileOrigin,
  format: RecordFormat,
): Promise<LandedFile[]> {
  /** The file's path in the sandbox, with its records where they are known once it lands. */
  const fetch = async (key: string): Promise<{ localPath: string; records?: number }> => {
    if (store.copyToFile || format === "parquet")
      return { localPath: await sandbox.takeObject(store, key, extensionOf(key)) };
    const bytes = await store.get(key);
    const localPath = await sandbox.writeFile(bytes, extensionOf(key));
    return { localPath, records: textRecords(countNonBlankLines(bytes), format) };
  };
  const land = async (
    key: string,
  ): Promise<{ key: string; localPath: string; records?: number; unreadable?: string }> => {
    let fetched: { localPath: string; records?: number };
    try {
      fetched = await fetch(key);
    } catch (error) {
      if (!(error instanceof ObjectNotFoundError)) throw error;
      throw new PlannedFileGoneError(origin.flow, origin.dataset, key, origin.location, { cause: error });
    }
    const { localPath } = fetched;
    if (format !== "parquet") return { key, ...fetched };
    try {
      const [row] = await sandbox.rows(
        `SELECT count(*)::BIGINT AS n FROM read_parquet(${quoteLiteral(localPath)})`,
      );
      return { key, localPath, records: Number(row?.["n"] ?? 0) };
    } catch (error) {
      if (!(error instanceof Error) || !/^Invalid Input Error/.test(error.message)) throw error;
      // DuckDB names the sandbox's copy; the user knows the file by its key.
      const reason = error.message.split("\n")[0] ?? "";
      const unreadable = `not a readable Parquet file (${reason.replaceAll(localPath, key)})`;
      return { key, localPath, records: 1, unreadable };
    }
  };
  const landed = await mapInParallel(keys, LANDING_CONCURRENCY, land);
  const uncounted = landed.filter((file) => file.records === undefined);
  const counts = mapInParallel(uncounted, COUNTING_CONCURRENCY, async (file) =>
    textRecords(await countFileNonBlankLines(file.localPath), format),
  );
  // Awaited by whoever needs the records, if anyone does: never an unhandled rejection meanwhile.
  counts.catch(() => undefined);
  let next = 0;
  return landed.map(({ records, ...file }) => {
    if (records !== undefined) return { ...file, records: Promise.resolve(records) };
    const i = next++;
    const counted = counts.then((all) => all[i]!);
    counted.catch(() => undefined);
    return { ...file, records: counted };
  });
}

/** A JSON file's records (its non-blank lines), or a CSV file's (less its header). */
function textRecords(lines: number, format: RecordFormat): number {
  return format === "csv" ? Math.max(0, lines - 1) : lines;
}

/**
 * How many of the files, given their records in order, fit in `maxRows` (at least one: a file is
 * never split).
 */
export function fitRows(records: readonly number[], maxRows: number): number {
  let kept = 0;
  let rows = 0;
  for (const count of records) {
    if (kept > 0 && rows + count > maxRows) break;
    kept += 1;
    rows += count;
  }
  return kept;
}

function extensionOf(key: string): string {
  const match = /\.[A-Za-z0-9]{1,10}$/.exec(key);
  return match ? match[0].toLowerCase() : "";
}
