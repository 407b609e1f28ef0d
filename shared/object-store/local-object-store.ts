import { randomUUID } from "node:crypto";
import { copyFile, link, mkdir, open, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { constants as fsConstants, readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import type { BigIntStats } from "node:fs";
import path from "node:path";
import { sliceRange } from "./byte-range.ts";
import { mapInParallel } from "./map-in-parallel.ts";
import { ObjectNotFoundError, StoreError, StoreUnavailableError } from "./errors.ts";
import { assertValidKey, compareKeys } from "./object-key.ts";
import type {
  ByteRange,
  ListOptions,
  ListPage,
  ObjectInfo,
  ObjectStore,
  PutIfAbsentResult,
  PutIfMatchResult,
} from "./object-store.ts";

const DEFAULT_PAGE_SIZE = 1000;
/** Prefix of in-flight temporary files; they are never listed. */
const TEMP_PREFIX = ".ebb-tmp-";

/**
 * An object store over a local folder: key `a/b/c` is the file `<root>/a/b/c`. A Delta table on
 * disk is read and written through it exactly as one in S3.
 *
 * - Every write goes to a temporary file in the target folder first, so readers never see a partial
 *   object. `put` and `putIfMatch` then `rename()` it into place; `putIfAbsent` `link()`s it, which
 *   fails with EEXIST when the key exists, even against another process: atomic like S3's
 *   `If-None-Match: *`.
 * - The ETag is `"<inode>-<size>-<mtime ns>"`: cheap to compute for a listing (no file is read) and
 *   changed by every write, since each write puts a new inode in place. `putIfMatch` compares and
 *   swaps under a per-key lock, so it is atomic within this process; across processes the check and
 *   the rename are two steps.
 * - Listing walks the folder and returns keys in UTF-8 byte order, as S3 does; folders are not
 *   objects, and empty folders are left behind by `delete` (S3 has none to remove).
 */
/**
 * Objects up to this size `get` reads synchronously (this is the local runtime's store: the event loop
 * waits microseconds on a page-cached file, where the thread pool's hops cost more).
 */
const SYNC_READ_MAX_BYTES = 256 * 1024;
/** Unlinks in flight at once where they wait on the disk (`deleteMany`): enough to overlap its waits. */
const UNLINK_CONCURRENCY = 64;
/** `deleteMany`'s synchronous unlinks between two turns of the event loop. */
const UNLINK_SLICE = 100;
/** A synchronous slice's time per unlink beyond which the rest go to the thread pool (the disk waits). */
const SLOW_UNLINK_MS = 0.5;

export class LocalObjectStore implements ObjectStore {
  readonly #locks = new Map<string, Promise<unknown>>();
  /** The root with one trailing separator: a key's file is this and the key (see `#path`). */
  readonly #base: string;

  constructor(readonly root: string) {
    this.#base = root.endsWith(path.sep) ? root : root + path.sep;
  }

  async get(key: string): Promise<Uint8Array> {
    const file = this.#path(key);
    try {
      // A small object (a commit file, a checkpoint hint) read synchronously: `readFile` made four
      // hops to the thread pool (open, fstat, read, close), more than the read itself; a change feed of
      // 100 commits paid 400. Larger ones keep the thread pool, so the event loop never waits on them.
      const stats = statSync(file, { throwIfNoEntry: false });
      if (stats?.isFile() && stats.size <= SYNC_READ_MAX_BYTES) return new Uint8Array(readFileSync(file));
      return new Uint8Array(await readFile(file));
    } catch (error) {
      throw this.#translate(error, key);
    }
  }

  async getRange(key: string, range: ByteRange): Promise<Uint8Array> {
    let handle;
    try {
      handle = await open(this.#path(key), "r");
      const size = (await handle.stat()).size;
      const start = "suffix" in range ? Math.max(0, size - range.suffix) : range.start;
      const end = "suffix" in range ? size - 1 : Math.min(range.end, size - 1);
      if (end < start) return new Uint8Array(0);
      const buffer = new Uint8Array(end - start + 1);
      const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, start);
      return sliceRange(buffer, { start: 0, end: bytesRead - 1 });
    } catch (error) {
      throw this.#translate(error, key);
    } finally {
      await handle?.close();
    }
  }

  async put(key: string, body: Uint8Array): Promise<{ etag: string }> {
    const target = this.#path(key);
    return this.#locked(key, async () => {
      const temp = await this.#writeTemp(target, body);
      await rename(temp, target);
      return { etag: etagOf(await stat(target, { bigint: true })) };
    });
  }

  /** The parts go to a temporary file as they come, renamed into place once all are written. */
  async putParts(key: string, parts: AsyncIterable<Uint8Array>): Promise<{ etag: string }> {
    const target = this.#path(key);
    await mkdir(path.dirname(target), { recursive: true });
    const temp = path.join(path.dirname(target), `${TEMP_PREFIX}${randomUUID()}`);
    try {
      await writeFile(temp, parts, { flag: "wx" });
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    return this.#locked(key, async () => {
      await rename(temp, target);
      return { etag: etagOf(await stat(target, { bigint: true })) };
    });
  }

  async putIfAbsent(key: string, body: Uint8Array): Promise<PutIfAbsentResult> {
    const target = this.#path(key);
    const temp = await this.#writeTemp(target, body);
    try {
      await link(temp, target);
      return "created";
    } catch (error) {
      if (isErrno(error, "EEXIST")) return "exists";
      throw this.#translate(error, key);
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  async putIfMatch(key: string, body: Uint8Array, etag: string): Promise<PutIfMatchResult> {
    const target = this.#path(key);
    return this.#locked(key, async () => {
      const current = await statOrUndefined(target);
      if (!current || etagOf(current) !== etag) return { outcome: "etag-mismatch" };
      const temp = await this.#writeTemp(target, body);
      await rename(temp, target);
      return { outcome: "written", etag: etagOf(await stat(target, { bigint: true })) };
    });
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const keys = await this.#keys(prefix, options.pageToken ?? options.startAfter);
    const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    const page = keys.slice(0, pageSize);
    // The page's stats in one go, as S3's listing carries its metadata: a `stat` of a folder just read
    // takes microseconds, where each asynchronous one paid a hop to the thread pool and back (the
    // change feed's and a snapshot's log listings spent more on those hops than on the stats).
    const objects = page.flatMap((key) => {
      const stats = statSyncOrUndefined(this.#path(key));
      return stats?.isFile() ? [infoOf(key, stats)] : [];
    });
    return keys.length > pageSize ? { objects, nextPageToken: page[page.length - 1]! } : { objects };
  }

  /** The walk alone: no `stat` per key, as `list` makes for each key of its page. */
  listKeys(prefix: string): Promise<string[]> {
    return this.#keys(prefix, undefined);
  }

  /** The keys under `prefix` after `after`, ascending. */
  async #keys(prefix: string, after: string | undefined): Promise<string[]> {
    if (prefix !== "") assertValidKey(prefix.endsWith("/") ? prefix.slice(0, -1) || "." : prefix);
    // Walk from the deepest folder the prefix names; its last segment may be a partial name.
    const folder = prefix.includes("/") ? prefix.slice(0, prefix.lastIndexOf("/") + 1) : "";
    const keys = await this.#walk(folder, prefix, after);
    const wanted =
      prefix === "" && after === undefined
        ? keys
        : keys.filter((k) => k.startsWith(prefix) && (after === undefined || compareKeys(k, after) > 0));
    return wanted.sort(compareKeys);
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const stats = await statOrUndefined(this.#path(key));
    return stats?.isFile() ? infoOf(key, stats) : undefined;
  }

  /**
   * A hard link: no byte is read or written (a 1M-row batch's 66 MB of JSON took 0.3-1 s to copy into
   * a sandbox). The link keeps the bytes it was made with: every write here puts a new file in place
   * (a rename or a link), never rewriting the linked one. A copy where the file system refuses the
   * link (another device, a file the process may not link).
   */
  async copyToFile(key: string, file: string): Promise<void> {
    const source = this.#path(key);
    try {
      await link(source, file);
      return;
    } catch (error) {
      if (isErrno(error, "ENOENT")) throw this.#translate(error, key);
      if (!isErrno(error, "EXDEV") && !isErrno(error, "EPERM") && !isErrno(error, "EACCES")) throw error;
    }
    try {
      await copyFile(source, file, fsConstants.COPYFILE_EXCL);
    } catch (error) {
      throw this.#translate(error, key);
    }
  }

  async delete(key: string): Promise<void> {
    await unlink(this.#path(key)).catch((error: unknown) => {
      if (!isErrno(error, "ENOENT")) throw this.#translate(error, key);
    });
  }

  /**
   * Synchronous unlinks, a slice at a time with a turn of the event loop between slices: an unlink of
   * a file the page cache holds takes microseconds, where each through the thread pool paid a promise
   * and a hop there and back (1,000: ~45 ms of CPU against ~12, and on a loaded host the pool's four
   * threads waited their turn, VACUUM's wall swinging with them). Where a slice shows the unlinks
   * waiting on the disk, the rest go to the thread pool, many in flight, so the event loop never
   * waits on a disk.
   */
  async deleteMany(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length;) {
      const [start, end] = [performance.now(), Math.min(keys.length, i + UNLINK_SLICE)];
      for (; i < end; i++) this.#unlinkSync(keys[i]!);
      if (i === keys.length) return;
      if (performance.now() - start > UNLINK_SLICE * SLOW_UNLINK_MS) {
        await mapInParallel(keys.slice(i), UNLINK_CONCURRENCY, (key) => this.delete(key));
        return;
      }
      await new Promise(setImmediate);
    }
  }

  #unlinkSync(key: string): void {
    try {
      unlinkSync(this.#path(key));
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw this.#translate(error, key);
    }
  }

  /** The file that holds `key`, if it exists now (a `stat` of it, synchronous: microseconds). */
  localFile(key: string): string | undefined {
    const file = this.#path(key);
    return statSyncOrUndefined(file)?.isFile() ? file : undefined;
  }

  /**
   * The file of a valid key: the root and the key joined as they are (no `.`/`..` segment can leave
   * the root, and the kernel reads `a//b` as `a/b`); a `path.join` of the split key cost VACUUM's 1,000
   * deletes more than their unlinks' own path lookups.
   */
  #path(key: string): string {
    assertValidKey(key);
    return this.#base + key;
  }

  async #writeTemp(target: string, body: Uint8Array): Promise<string> {
    await mkdir(path.dirname(target), { recursive: true });
    const temp = path.join(path.dirname(target), `${TEMP_PREFIX}${randomUUID()}`);
    await writeFile(temp, body, { flag: "wx" });
    return temp;
  }

  /** Runs `work` after every earlier locked call on `key` in this process has finished. */
  async #locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const settled = run.catch(() => undefined);
    this.#locks.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.#locks.get(key) === settled) this.#locks.delete(key);
    }
  }

  /**
   * The file keys under `folder` (a key prefix ending in `/`, or empty for the root), less folders
   * that hold no key under `prefix` after `after`: a listing's later page does not read again the
   * folders its earlier pages took (VACUUM's second page read all 1,000 partitions of a table a
   * second time). Folders are read synchronously: this is the local runtime's store, and a table of
   * 1,000 partitions (VACUUM's walk) waited on 1,000 round trips through the thread pool, 64 in flight,
   * where each `readdir` of a cached folder takes microseconds; the event loop blocking a few
   * milliseconds for the whole walk is acceptable there.
   */
  #walk(folder: string, prefix: string, after: string | undefined): Promise<string[]> {
    try {
      return Promise.resolve(this.#walkSync(folder, prefix, after));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  #walkSync(folder: string, prefix: string, after: string | undefined): string[] {
    const keys: string[] = [];
    const read = (relative: string): string[] => {
      let entries;
      try {
        entries = readdirSync(this.#base + relative, { withFileTypes: true });
      } catch (error) {
        if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) return [];
        throw new StoreUnavailableError(`cannot list ${relative || "(root)"}`, { cause: error });
      }
      const folders: string[] = [];
      for (const entry of entries) {
        if (entry.name.startsWith(TEMP_PREFIX)) continue;
        if (entry.isDirectory()) {
          const sub = `${relative}${entry.name}/`;
          if (mayHoldKeys(sub, prefix, after)) folders.push(sub);
        } else if (entry.isFile()) keys.push(`${relative}${entry.name}`);
      }
      return folders;
    };
    let level = [folder];
    while (level.length > 0) level = level.flatMap(read);
    return keys;
  }

  #translate(error: unknown, key: string): Error {
    if (isErrno(error, "ENOENT") || isErrno(error, "EISDIR") || isErrno(error, "ENOTDIR")) {
      return new ObjectNotFoundError(key, { cause: error });
    }
    if (error instanceof StoreError) return error;
    return new StoreUnavailableError(`local store failed on ${key}`, { cause: error });
  }
}

/**
 * Whether folder `sub` (ending in `/`) may hold a key under `prefix` sorting after `after`. Its keys
 * all start with `sub`: when `after` sorts after `sub` without starting with it, it differs from
 * `sub` at a character every one of those keys shares, and sorts after all of them.
 */
function mayHoldKeys(sub: string, prefix: string, after: string | undefined): boolean {
  if (!sub.startsWith(prefix) && !prefix.startsWith(sub)) return false;
  return after === undefined || after.startsWith(sub) || compareKeys(sub, after) > 0;
}

function etagOf(stats: BigIntStats): string {
  return `"${stats.ino}-${stats.size}-${stats.mtimeNs}"`;
}

function infoOf(key: string, stats: BigIntStats): ObjectInfo {
  return { key, size: Number(stats.size), lastModified: Number(stats.mtimeMs), etag: etagOf(stats) };
}

function statSyncOrUndefined(file: string): BigIntStats | undefined {
  try {
    return statSync(file, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if (isErrno(error, "ENOTDIR")) return undefined;
    throw error;
  }
}

async function statOrUndefined(file: string): Promise<BigIntStats | undefined> {
  try {
    return await stat(file, { bigint: true });
  } catch (error) {
    if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) return undefined;
    throw error;
  }
}

function isErrno(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}
