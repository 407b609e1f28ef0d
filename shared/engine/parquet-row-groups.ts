import { open, rm, type FileHandle } from "node:fs/promises";
import { quoteLiteral } from "../duck/sql-text.ts";
import { ObjectNotFoundError } from "../object-store/errors.ts";
import type { ObjectStore } from "../object-store/object-store.ts";
import type { FileOrigin } from "./auto-loader-source.ts";
import { PlannedFileGoneError, SourceUnavailableError } from "./errors.ts";
import type { LandedFile } from "./record-reader.ts";
import type { Sandbox } from "./sandbox.ts";

/**
 * Reading one Parquet file larger than a batch's byte bound by row groups (Spark's reader splits a
 * file the same way): the footer is fetched with a ranged read and says where each row group lies;
 * a batch takes a range of them, fetched with ranged reads into a sparse copy of the file (its magic,
 * those row groups at their offsets, its footer, holes elsewhere), which DuckDB reads filtered on
 * `file_row_number` so it never touches a hole. The copy takes the range's bytes of the temporary
 * folder, not the file's.
 */

/** A row group's place in its file: bytes `[start, end)` and `rows` rows. */
export interface RowGroup {
  readonly start: number;
  readonly end: number;
  readonly rows: number;
}

/** Row groups `[from, to)` of `key`, a file of `of` row groups: a batch over part of one file. */
export interface RowGroupSlice {
  readonly key: string;
  readonly from: number;
  readonly to: number;
  readonly of: number;
}

/**
 * The end of the range of row groups starting at `from` that fits `maxBytes` (pure): at least one
 * group, so a group larger than the bound is read alone.
 */
export function fitRowGroups(groups: readonly RowGroup[], from: number, maxBytes: number): number {
  let bytes = 0;
  let to = from;
  while (to < groups.length) {
    const size = groups[to]!.end - groups[to]!.start;
    if (to > from && bytes + size > maxBytes) break;
    bytes += size;
    to += 1;
  }
  return to;
}

/** The bytes row groups `[from, to)` take. */
export function rowGroupBytes(groups: readonly RowGroup[], from: number, to: number): number {
  return groups.slice(from, to).reduce((sum, group) => sum + group.end - group.start, 0);
}

const MAGIC = new TextEncoder().encode("PAR1");
/** The footer's length and the magic after it. */
const TAIL_BYTES = 8;

/** A Parquet file in the store: its size and footer, fetched by ranged reads. */
interface Footer {
  readonly size: number;
  readonly bytes: Uint8Array;
}

async function fetchFooter(store: ObjectStore, key: string, origin: FileOrigin): Promise<Footer> {
  const gone = (cause?: unknown) =>
    new PlannedFileGoneError(origin.flow, origin.dataset, key, origin.location, { cause });
  const info = await store.head(key);
  if (!info) throw gone();
  try {
    const tail = Buffer.from(await store.getRange(key, { suffix: TAIL_BYTES }));
    const length = tail.readUInt32LE(0) + TAIL_BYTES;
    return { size: info.size, bytes: await store.getRange(key, { suffix: length }) };
  } catch (error) {
    if (!(error instanceof ObjectNotFoundError)) throw error;
    throw gone(error);
  }
}

/** A sparse copy of the file in the sandbox holding its magic and footer, and whatever `fill` writes. */
async function sparseCopy(
  sandbox: Sandbox,
  footer: Footer,
  fill: (handle: FileHandle) => Promise<void> = async () => undefined,
): Promise<string> {
  const path = await sandbox.newPath(".parquet");
  const handle = await open(path, "r+");
  try {
    await writeWhole(handle, MAGIC, 0);
    await fill(handle);
    await writeWhole(handle, footer.bytes, footer.size - footer.bytes.length);
  } finally {
    await handle.close();
  }
  return path;
}

/** The row groups of a sparse copy, from its footer. */
async function groupsOf(sandbox: Sandbox, path: string): Promise<RowGroup[]> {
  // A column chunk starts at its dictionary page when it has one; a row group spans its chunks.
  const rows = await sandbox.rows(
    `SELECT row_group_id AS g, any_value(row_group_num_rows)::BIGINT AS rows, ` +
      `min(least(data_page_offset, coalesce(nullif(dictionary_page_offset, 0), data_page_offset)))::BIGINT AS start, ` +
      `max(least(data_page_offset, coalesce(nullif(dictionary_page_offset, 0), data_page_offset)) + total_compressed_size)::BIGINT AS "end" ` +
      `FROM parquet_metadata(${quoteLiteral(path)}) GROUP BY row_group_id ORDER BY row_group_id`,
  );
  return rows.map((row) => ({
    start: Number(row["start"]),
    end: Number(row["end"]),
    rows: Number(row["rows"]),
  }));
}

/** The row groups of `key`, read from its footer alone. */
export async function readRowGroups(
  store: ObjectStore,
  key: string,
  sandbox: Sandbox,
  origin: FileOrigin,
): Promise<RowGroup[]> {
  const footer = await fetchFooter(store, key, origin);
  const path = await sparseCopy(sandbox, footer);
  try {
    return await groupsOf(sandbox, path);
  } finally {
    await rm(path, { force: true });
  }
}

/**
 * Lands `slice` of its file in the sandbox: a sparse copy holding only its row groups, read as rows
 * `[first, end)` of the file.
 */
export async function landRowGroups(
  store: ObjectStore,
  slice: RowGroupSlice,
  sandbox: Sandbox,
  origin: FileOrigin,
): Promise<LandedFile> {
  const footer = await fetchFooter(store, slice.key, origin);
  const path = await sparseCopy(sandbox, footer);
  const groups = await groupsOf(sandbox, path);
  if (groups.length !== slice.of)
    throw new SourceUnavailableError(
      `flow "${origin.flow}" reads the Parquet file ${slice.key} under ${origin.location} by row groups, and it now has ${groups.length} of them, not the ${slice.of} its batches were planned over: a file is read as it landed, so land a changed file under a new name`,
      { data: { flow: origin.flow, key: slice.key, location: origin.location } },
    );
  const handle = await open(path, "r+");
  try {
    for (const group of groups.slice(slice.from, slice.to)) {
      // A range's `end` is inclusive (HTTP Range).
      const bytes = await store.getRange(slice.key, { start: group.start, end: group.end - 1 });
      await writeWhole(handle, bytes, group.start);
    }
  } finally {
    await handle.close();
  }
  const first = groups.slice(0, slice.from).reduce((sum, group) => sum + group.rows, 0);
  const rows = groups.slice(slice.from, slice.to).reduce((sum, group) => sum + group.rows, 0);
  return {
    key: slice.key,
    localPath: path,
    records: Promise.resolve(rows),
    rowRange: { first, end: first + rows },
  };
}

/** Writes all of `bytes` at `position` (a write to a nearly full disk may write part and return). */
async function writeWhole(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    if (bytesWritten === 0)
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    done += bytesWritten;
  }
}
