import { rmSync } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { HeldInstance } from "../duck/duck-session.ts";
import type { ScratchFolder } from "../duck/scratch-folder.ts";

/**
 * Locked sandbox instances kept for the next sandbox of the process, each with the folder it is
 * locked to: opening one (an instance, its lock-down, a folder) and closing it (DuckDB's close joins
 * its threads and frees its memory, 10-50 ms of the main thread) sat on every flow's and view's path.
 *
 * What one sandbox made cannot reach the next: its TEMP tables and views went with its connection
 * (`DuckSession.release`); its files are removed from the folder; the lock-down is the instance's and
 * no SQL can change it (`lock_configuration`). An instance is not kept when a statement failed on it,
 * nor when spill files are left in its folder (they would hold the last sandbox's rows).
 */

export interface IdleSandbox {
  readonly instance: HeldInstance;
  readonly folder: ScratchFolder;
}

/** Idle instances kept per configuration: an update runs a few sandboxes at once at most. */
let keptPerConfiguration = 2;

/** A kept sandbox, and whether its folder was emptied (false: it failed, and the sandbox is closed). */
interface Kept {
  readonly sandbox: IdleSandbox;
  readonly emptied: Promise<boolean>;
}

const idle = new Map<string, Kept[]>();

/**
 * An idle sandbox locked with configuration `key`, taken out of the pool once its folder is emptied;
 * undefined when none is. One whose folder is gone (removed with the temp folder it was in) is
 * closed, not handed out.
 */
export async function takeIdleSandbox(key: string): Promise<IdleSandbox | undefined> {
  for (let kept = idle.get(key)?.pop(); kept; kept = idle.get(key)?.pop()) {
    if (!(await kept.emptied)) continue;
    if ((await stat(kept.sandbox.folder.dir).catch(() => undefined))?.isDirectory()) return kept.sandbox;
    kept.sandbox.instance.closeSync();
  }
  return undefined;
}

/**
 * Keeps `sandbox` for the next sandbox with configuration `key`; returns false (nothing kept: the
 * caller closes the instance and removes the folder) when the pool is full or the folder still holds
 * spill files. Its folder is emptied after this returns, off the closing task's path (the files of
 * a view's state write and the links to its inputs took a few ms to remove); `takeIdleSandbox` waits
 * for it.
 */
export async function keepIdleSandbox(key: string, sandbox: IdleSandbox): Promise<boolean> {
  const kept = idle.get(key) ?? [];
  if (kept.length >= keptPerConfiguration) return false;
  const spill = await readdir(path.join(sandbox.folder.dir, SPILL_FOLDER)).catch(() => []);
  if (spill.length > 0) return false;
  if (kept.length >= keptPerConfiguration) return false;
  kept.push({ sandbox, emptied: emptyFolder(sandbox) });
  idle.set(key, kept);
  removeAtExit();
  return true;
}

/** Removes everything in the sandbox's folder but its spill folder; on failure, closes the sandbox. */
async function emptyFolder(sandbox: IdleSandbox): Promise<boolean> {
  try {
    const names = await readdir(sandbox.folder.dir);
    await Promise.all(
      names
        .filter((name) => name !== SPILL_FOLDER)
        .map((name) => rm(path.join(sandbox.folder.dir, name), { recursive: true, force: true })),
    );
    return true;
  } catch {
    // Nobody awaits this yet: a failure here must not become an unhandled rejection.
    try {
      sandbox.instance.closeSync();
      await sandbox.folder.dispose();
    } catch {
      // The folder goes at the process's exit, or as a leftover at the next start-up.
    }
    return false;
  }
}

/** The folder DuckDB spills into, inside a sandbox's folder (kept: DuckDB made it and expects it). */
export const SPILL_FOLDER = "spill";

/**
 * Sets how many idle instances are kept per configuration (0: none, every sandbox opens and closes
 * its own, as before the pool), closing those over it; returns the previous count. For benches' A/B.
 */
export async function setIdleSandboxLimit(count: number): Promise<number> {
  const previous = keptPerConfiguration;
  keptPerConfiguration = count;
  for (const kept of idle.values()) {
    for (const { sandbox, emptied } of kept.splice(count)) {
      if (!(await emptied)) continue;
      sandbox.instance.closeSync();
      await sandbox.folder.dispose();
    }
  }
  return previous;
}

let removingAtExit = false;

/** The kept folders are removed when the process exits (a killed one's go at the next start-up). */
function removeAtExit(): void {
  if (removingAtExit) return;
  removingAtExit = true;
  process.once("exit", () => {
    for (const kept of idle.values())
      for (const { sandbox } of kept) rmSync(sandbox.folder.dir, { recursive: true, force: true });
  });
}
