import { execFile } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { link, mkdir, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

/**
 * Named pipes made ahead, many by one `mkfifo`: Node has no call that makes a pipe, and a child
 * process per COPY's pipe sat on every write's path (a fork takes 10-50 ms of the main thread on a
 * loaded host, and an update writes a file per flow and view). A pipe is handed out by a hard link
 * into its folder (a link never replaces a file already there, as `mkfifo` would not either) and the
 * pool's name removed; the pool is refilled off the write's path when it runs low.
 */

/**
 * Pipes one `mkfifo` makes: a fork's cost (10-50 ms of the main thread) does not grow with them, and
 * an update takes 4-5 per flow and view, so 16 forked about once per update (25 ms of a 1% increment).
 */
const BATCH = 256;

const run = promisify(execFile);

interface Pool {
  readonly dir: string;
  readonly ready: string[];
  made: number;
  refilling: Promise<void> | undefined;
}

let pool: Pool | undefined;

function thePool(): Pool {
  if (pool) return pool;
  sweepDeadPools(tmpdir());
  const dir = path.join(tmpdir(), `ebb-pipes-${process.pid}-${Date.now()}`);
  pool = { dir, ready: [], made: 0, refilling: undefined };
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return pool;
}

function refill(p: Pool): Promise<void> {
  p.refilling ??= (async () => {
    await mkdir(p.dir, { recursive: true });
    const names = Array.from({ length: BATCH }, () => path.join(p.dir, `pipe-${p.made++}`));
    await run("mkfifo", names);
    p.ready.push(...names);
  })().finally(() => (p.refilling = undefined));
  return p.refilling;
}

/**
 * Makes a named pipe at each of `paths` that has nothing there yet; a path already taken (by a file
 * DuckDB made) is left as it is. Each is made from the pool, or, when the pool cannot give it (empty
 * and failing to refill, or on another file system), by `mkfifo` itself.
 */
export async function makePipes(paths: readonly string[]): Promise<void> {
  const p = thePool();
  const left: string[] = [];
  for (const target of paths) {
    if (p.ready.length === 0) await refill(p).catch(() => undefined);
    const pipe = p.ready.pop();
    if (!pipe) {
      left.push(target);
      continue;
    }
    try {
      await link(pipe, target);
      await unlink(pipe);
    } catch (error) {
      p.ready.push(pipe);
      // Taken already: as mkfifo, nothing is made. Another file system or no link: mkfifo makes it.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") left.push(target);
    }
  }
  if (p.ready.length < BATCH / 4) void refill(p).catch(() => undefined);
  // `mkfifo` fails for a name DuckDB took first; the others are made.
  if (left.length > 0) await run("mkfifo", left).catch(() => undefined);
}

/**
 * Removes the pool folders (`ebb-pipes-<pid>-…`) in `root` of processes no longer running: a process
 * killed without its exit event leaves its folder behind. A live process's folder is kept.
 */
export function sweepDeadPools(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^ebb-pipes-(\d+)-/.exec(name)?.[1];
    if (pid === undefined || running(Number(pid))) continue;
    rmSync(path.join(root, name), { recursive: true, force: true });
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
