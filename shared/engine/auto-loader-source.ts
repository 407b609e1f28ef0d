import { readFile } from "node:fs/promises";
import { quoteLiteral } from "../duck/sql-text.ts";
import { ObjectNotFoundError } from "../store/errors.ts";
import { listAll, type ObjectStore } from "../store/object-store.ts";
import { compareKeys } from "../store/object-key.ts";
import { SourceUnavailableError } from "./errors.ts";
import type { LandedFile, RecordFormat } from "./record-reader.ts";
import type { Sandbox } from "./sandbox.ts";

/**
 * The `auto_loader` source: files landing under a prefix, each read exactly once. Its offset is the
 * set of files processed (`file-set-state.ts`), not a position in the listing, so a file whose key
 * sorts before ones already processed (a late upload) is still picked up.
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

/** Every key under the source prefix. */
export async function listSourceKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const info of listAll(store, ""))
    if (info.size > 0 || !info.key.endsWith("/")) keys.push(info.key);
  return keys;
}

/** Copies `keys` into the sandbox folder, in order. A file gone since it was listed is an error. */
export async function landFiles(
  store: ObjectStore,
  sandbox: Sandbox,
  keys: readonly string[],
  location: string,
): Promise<LandedFile[]> {
  const landed: LandedFile[] = [];
  for (const key of keys) {
    try {
      landed.push({ key, localPath: await sandbox.writeFile(await store.get(key), extensionOf(key)) });
    } catch (error) {
      if (!(error instanceof ObjectNotFoundError)) throw error;
      throw new SourceUnavailableError(
        `file ${key} under ${location} was planned for a batch but is gone: restore it, or reset the flow's checkpoint`,
        { cause: error, data: { key, location } },
      );
    }
  }
  return landed;
}

/**
 * Keeps files while their rows fit in `maxRows` (at least one file: a file is never split). Files
 * are landed already; counting reads them locally.
 */
export async function fitRows(
  sandbox: Sandbox,
  files: readonly LandedFile[],
  format: RecordFormat,
  maxRows: number,
): Promise<LandedFile[]> {
  const kept: LandedFile[] = [];
  let rows = 0;
  for (const file of files) {
    const count = await countRecords(sandbox, file, format);
    if (kept.length > 0 && rows + count > maxRows) break;
    kept.push(file);
    rows += count;
  }
  return kept;
}

async function countRecords(sandbox: Sandbox, file: LandedFile, format: RecordFormat): Promise<number> {
  if (format === "parquet") {
    const [row] = await sandbox.rows(
      `SELECT count(*)::BIGINT AS n FROM read_parquet(${quoteLiteral(file.localPath)})`,
    );
    return Number(row?.["n"] ?? 0);
  }
  const lines = (await readFile(file.localPath, "utf8"))
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "").length;
  return format === "csv" ? Math.max(0, lines - 1) : lines;
}

function extensionOf(key: string): string {
  const match = /\.[A-Za-z0-9]{1,10}$/.exec(key);
  return match ? match[0].toLowerCase() : "";
}
