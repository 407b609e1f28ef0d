import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Copies the folder `from` to `to` by reading and writing each file, as delta-rs's side copies its
 * table (Python's `shutil.copytree`: `sendfile`, a write through the page cache). Not `fs.cp`:
 * Node's `copyFile` uses `copy_file_range`, and unlinking files made that way cost ~5 ms each on
 * this host's ext4 against ~0.1 ms for written ones, so VACUUM's timed unlinks paid for how the bench
 * copied the table, not for anything a table written by Ebb (temporary file, then rename) costs.
 */
export async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const [source, target] = [path.join(from, entry.name), path.join(to, entry.name)];
    if (entry.isDirectory()) await copyTree(source, target);
    else if (entry.isFile()) await writeFile(target, await readFile(source));
  }
}
