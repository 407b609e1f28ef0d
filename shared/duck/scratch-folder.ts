import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * A private temporary folder for files DuckDB must read from disk (parquet fetched through an
 * object store). Created with `mkdtemp`, so no other process can predict its name; removed whole on
 * `dispose()`.
 */
export class ScratchFolder {
  #written = 0;

  private constructor(readonly dir: string) {}

  static async create(label = "ebb-duck-"): Promise<ScratchFolder> {
    return new ScratchFolder(await mkdtemp(path.join(tmpdir(), label)));
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
    const file = path.join(this.dir, `${String(this.#written++).padStart(6, "0")}${extension}`);
    await writeFile(file, bytes, { flag: "wx" });
    return file;
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
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
