import { chmod, lstat, readdir } from "node:fs/promises";
import path from "node:path";

/**
 * The local runtime's data is its owner's alone: the data folder and everything below it 0700/0600,
 * and a umask so whatever this process and the stand-ins it starts create later is born that way.
 */

/** Files and folders created from now on by this process and its children: owner only. */
export function createOwnerOnly(): void {
  process.umask(0o077);
}

/** Folders to 0700 and files to 0600 under `dir` (data folders written by earlier, looser runs). */
export async function restrictToOwner(dir: string): Promise<void> {
  const info = await lstat(dir).catch(() => undefined);
  if (!info || info.isSymbolicLink()) return;
  if (!info.isDirectory()) {
    if ((info.mode & 0o077) !== 0) await chmod(dir, info.mode & 0o700);
    return;
  }
  if ((info.mode & 0o777) !== 0o700) await chmod(dir, 0o700);
  for (const name of await readdir(dir)) await restrictToOwner(path.join(dir, name));
}
