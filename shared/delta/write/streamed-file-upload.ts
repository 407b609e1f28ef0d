import { open, rm, type FileHandle } from "node:fs/promises";
import { putInParts, type ObjectStore } from "../../object-store/object-store.ts";

/**
 * One data file uploaded as its bytes come (from a pipe DuckDB writes, `piped-copy.ts`), never whole
 * on disk: a file of one part is `put` once its footer says it holds rows; a longer one goes up in
 * parts (a multipart upload) while DuckDB writes the rest. Its stats are read from its footer, kept
 * from the last parts, in a sparse local file (the footer at the file's offset, a hole before it),
 * which is all `parquet_metadata` reads and takes no more room than the footer.
 */

/** Bytes per uploaded part: above S3's 5 MiB minimum; memory holds a few at a time. */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024;

const MAGIC = Buffer.from("PAR1", "latin1");

export interface StreamedFile<Stats extends { readonly numRecords: number }> {
  /** The file's bytes, in order. */
  readonly bytes: AsyncIterable<Uint8Array>;
  readonly store: ObjectStore;
  readonly key: string;
  /** A local path for the footer-only copy (inside the folder DuckDB may read). */
  readonly footerPath: string;
  /** The record count and stats, read from a footer-only copy of the file. */
  readonly readFooter: (footerPath: string) => Promise<Stats>;
  /** The same from the footer's bytes in process, tried first; undefined where it cannot tell. */
  readonly decodeFooter?: (footer: Uint8Array) => Stats | undefined;
}

/** Uploads the file; its size and stats, or undefined when it had no bytes or no rows (nothing uploaded). */
export async function uploadStreamedFile<Stats extends { readonly numRecords: number }>(
  file: StreamedFile<Stats>,
): Promise<{ readonly size: number; readonly stats: Stats } | undefined> {
  const parts = joinedParts(file.bytes, UPLOAD_PART_BYTES);
  const first = await parts.next();
  if (first.done) return undefined;
  const second = await parts.next();
  if (second.done) {
    // One part: the whole file is in memory; a file of no rows is not uploaded.
    const stats = await statsFrom(file, first.value.length, first.value);
    if (stats.numRecords === 0) return undefined;
    await file.store.put(file.key, first.value);
    return { size: first.value.length, stats };
  }
  let size = 0;
  /** The last two parts: the footer is in them (a part is far larger than a footer). */
  let tail: Uint8Array[] = [];
  const head = [first.value, second.value];
  async function* counted(): AsyncGenerator<Uint8Array> {
    const seen = (part: Uint8Array): Uint8Array => {
      size += part.length;
      tail = [...tail.slice(-1), part];
      return part;
    };
    for (const part of head) yield seen(part);
    for await (const part of parts) yield seen(part);
  }
  await putInParts(file.store, file.key, counted());
  const kept = Buffer.concat(tail);
  const needed = footerBytes(kept);
  const footer = kept.length >= needed ? kept : await file.store.getRange(file.key, { suffix: needed });
  return { size, stats: await statsFrom(file, size, footer) };
}

/** The bytes of the footer with its length and magic (Parquet's last 8 bytes give the length). */
function footerBytes(tail: Uint8Array): number {
  const view = Buffer.from(tail.buffer, tail.byteOffset, tail.byteLength);
  return view.readUInt32LE(view.length - 8) + 8;
}

/** Reads the stats from a sparse copy of the file that holds only its leading magic and `tail`. */
async function statsFrom<Stats extends { readonly numRecords: number }>(
  file: StreamedFile<Stats>,
  size: number,
  tail: Uint8Array,
): Promise<Stats> {
  // Only the footer is written: the rest of the tail would take room the bound does not allow for.
  const footer = tail.subarray(Math.max(0, tail.length - footerBytes(tail)));
  const decoded = file.decodeFooter?.(footer);
  if (decoded) return decoded;
  const handle = await open(file.footerPath, "w");
  try {
    await writeWhole(handle, MAGIC, 0);
    await writeWhole(handle, footer, size - footer.length);
    await handle.close();
    return await file.readFooter(file.footerPath);
  } finally {
    await handle.close().catch(() => undefined);
    await rm(file.footerPath, { force: true });
  }
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

/** `chunks` joined into parts of at least `partBytes` (the last one may be shorter). */
async function* joinedParts(
  chunks: AsyncIterable<Uint8Array>,
  partBytes: number,
): AsyncGenerator<Uint8Array> {
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  for await (const chunk of chunks) {
    held.push(chunk);
    heldBytes += chunk.length;
    if (heldBytes >= partBytes) {
      yield Buffer.concat(held, heldBytes);
      held = [];
      heldBytes = 0;
    }
  }
  if (heldBytes > 0) yield Buffer.concat(held, heldBytes);
}
