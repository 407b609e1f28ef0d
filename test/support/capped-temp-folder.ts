import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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

/**
 * A fresh tmpfs of `megabytes`, and how to take it away again. Its folder is named for this process
 * (`ebb-capped-<pid>-…`): a test process killed mid-run leaves its mount behind, and the next use
 * here unmounts the mounts of processes no longer running.
 */
export function mountCappedFolder(megabytes: number): { dir: string; unmount(): void } {
  unmountStale();
  const dir = mkdtempSync(path.join(tmpdir(), `ebb-capped-${process.pid}-`));
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

/** Unmounts and removes the capped folders (`ebb-capped-<pid>-…`) of processes no longer running. */
export function unmountStale(): void {
  const mounts = readFileSync("/proc/mounts", "utf8").split("\n");
  for (const line of mounts) {
    // The mount point, with its spaces and tabs octal-escaped.
    const dir = line
      .split(" ")[1]
      ?.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    const pid = dir && /^ebb-capped-(\d+)-/.exec(path.basename(dir))?.[1];
    if (!dir || !pid || running(Number(pid))) continue;
    try {
      execFileSync("umount", ["-l", dir], { stdio: "ignore" });
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another process swept it first, or it is not ours to unmount: leave it.
    }
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
