import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * A temporary folder of a fixed size, as a Lambda's `/tmp` is: a tmpfs mounted for the test, which
 * fills with a real ENOSPC. Mounting needs root (CI runs as root); elsewhere `cappedTempFolders` is
 * false and the tests that need one are skipped.
 */
export const cappedTempFolders = process.getuid?.() === 0 && canMount();

function canMount(): boolean {
  const dir = mkdtempSync(path.join(tmpdir(), "ebb-cap-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir], { stdio: "ignore" });
    execFileSync("umount", [dir], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A fresh tmpfs of `megabytes`, and how to take it away again. */
export function mountCappedFolder(megabytes: number): { dir: string; unmount(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "ebb-capped-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m`, "tmpfs", dir]);
  return {
    dir,
    unmount: () => {
      execFileSync("umount", ["-l", dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `work` with `TMPDIR` (Node's `os.tmpdir()`, where every sandbox and scratch folder goes) on a
 * fresh tmpfs of `megabytes`; unmounts it afterwards.
 */
export async function withCappedTempFolder<T>(
  megabytes: number,
  work: (dir: string) => Promise<T>,
): Promise<T> {
  const { dir, unmount } = mountCappedFolder(megabytes);
  const previous = process.env["TMPDIR"];
  process.env["TMPDIR"] = dir;
  try {
    return await work(dir);
  } finally {
    if (previous === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = previous;
    unmount();
  }
}
