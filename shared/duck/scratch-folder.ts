import { mkdtempSync } from "node:fs";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ObjectStore } from "../object-store/object-store.ts";

/**
 * A private temporary folder for files DuckDB must read from disk (parquet fetched through an
 * object store). Created with `mkdtemp`, so no other process can predict its name; removed whole on
 * `dispose()`. Top-level folders are named `ebb-<label>-<pid>-XXXXXX`, so a process that died before
 * disposing of its folders can be told apart from a live one (`removeLeftoverScratchFolders`).
 */
export class ScratchFolder {
  #written = 0;
  #dir: string | undefined;

  private constructor(
    dir: string | undefined,
    private readonly make?: () => string,
  ) {
    this.#dir = dir;
  }

  /** `label` is `ebb-<kind>-` (e.g. `ebb-sandbox-`). */
  static async create(label = "ebb-duck-"): Promise<ScratchFolder> {
    return new ScratchFolder(await mkdtemp(path.join(tmpdir(), `${label}${process.pid}-`)));
  }

  /**
   * A scratch folder made (`mkdtempSync`, microseconds) the first time its path is asked for, and
   * only then removed: most reads of a local table (a snapshot, a change feed, VACUUM) never write
   * one, and made and removed each time, it cost them two trips through Node's thread pool.
   */
  static deferred(label = "ebb-duck-"): ScratchFolder {
    return new ScratchFolder(undefined, () => mkdtempSync(path.join(tmpdir(), `${label}${process.pid}-`)));
  }

  /**
   * A folder inside this one, made (`mkdtempSync`) the first time its path is asked for, as
   * `deferred`'s: a commit's own scratch is written to only when its post-commit work copies files.
   */
  deferredChild(label = "ebb-duck-"): ScratchFolder {
    return new ScratchFolder(undefined, () => mkdtempSync(path.join(this.dir, label)));
  }

  /** A scratch folder inside `parent` (e.g. inside a sandbox's folder, so the sandbox may use it). */
  static async createIn(parent: string, label = "ebb-duck-"): Promise<ScratchFolder> {
    return new ScratchFolder(await mkdtemp(path.join(parent, label)));
  }

  /**
   * Writes `bytes` to a fresh file and returns its absolute path. `extension` (e.g. `.parquet`) is
   * kept so readers can tell the format; the name never comes from the caller, so it cannot escape.
   */
  async write(bytes: Uint8Array, extension = ""): Promise<string> {
    const file = this.#fresh(extension);
    await writeFile(file, bytes, { flag: "wx" });
    return file;
  }

  /**
   * Puts object `key` of `store` in a fresh file (named as `write` names them) and returns its path:
   * without the bytes passing through the process where the store can (`copyToFile`, a local
   * folder's link), else read and written.
   */
  async take(store: ObjectStore, key: string, extension = ""): Promise<string> {
    if (!store.copyToFile) return this.write(await store.get(key), extension);
    const file = this.#fresh(extension);
    await store.copyToFile(key, file);
    return file;
  }

  /** The folder's path (made now if it is deferred and not made yet). */
  get dir(): string {
    return (this.#dir ??= this.make!());
  }

  #fresh(extension: string): string {
    return path.join(this.dir, `${String(this.#written++).padStart(6, "0")}${extension}`);
  }

  async dispose(): Promise<void> {
    if (this.#dir === undefined) return;
    await rm(this.#dir, { recursive: true, force: true });
  }
}

/** Creates a scratch folder for `work` and removes it afterwards. */
export async function withScratchFolder<T>(work: (scratch: ScratchFolder) => Promise<T>): Promise<T> {
  const scratch = await ScratchFolder.create();
  try {
    return await work(scratch);
  } finally {
    await scratch.dispose();
  }
}

const SCRATCH_NAME = /^ebb-[a-z]+-(?:(\d+)-)?[A-Za-z0-9]{6}$/;
/** A folder without a process id (written before they carried one) is a leftover once this old. */
const UNTAGGED_LEFTOVER_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * Removes scratch folders under the temp folder that no live process owns: those of a process that
 * was killed (SIGKILL, a Lambda timeout) before it could dispose of them. Run at start-up; returns
 * the folders removed. Folders of live processes, this one included, are left alone.
 */
export async function removeLeftoverScratchFolders(root = tmpdir(), now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const match = SCRATCH_NAME.exec(name);
    if (!match) continue;
    const dir = path.join(root, name);
    const pid = match[1] === undefined ? undefined : Number(match[1]);
    const leftover =
      pid === undefined
        ? now - (await stat(dir).catch(() => ({ mtimeMs: now }))).mtimeMs > UNTAGGED_LEFTOVER_AGE_MS
        : !isAlive(pid);
    if (!leftover) continue;
    await rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
