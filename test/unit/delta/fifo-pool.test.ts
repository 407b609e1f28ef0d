import type * as ChildProcess from "node:child_process";
import { spawn } from "node:child_process";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

// Counts the child processes the pool starts (each `mkfifo` is one).
const started = vi.hoisted(() => ({ mkfifo: 0 }));
vi.mock("node:child_process", async (original) => {
  const real = await original<typeof ChildProcess>();
  return {
    ...real,
    execFile: ((file: string, ...rest: unknown[]) => {
      if (file === "mkfifo") started.mkfifo += 1;
      return (real.execFile as (...args: unknown[]) => unknown)(file, ...rest);
    }) as typeof real.execFile,
  };
});

const { makePipes, sweepDeadPools } = await import("../../../shared/delta/write/fifo-pool.ts");

describe("the pool of named pipes", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const folder = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ebb-fifo-pool-"));
    dirs.push(dir);
    return dir;
  };

  it("makes a pipe at each path, with a process per batch of pipes, not per pipe", async () => {
    const made: string[] = [];
    for (let write = 0; write < 20; write++) {
      const dir = await folder();
      const paths = [path.join(dir, "data_0.parquet"), path.join(dir, "data_1.parquet")];
      await makePipes(paths);
      made.push(...paths);
    }
    for (const pipe of made) expect((await lstat(pipe)).isFIFO()).toBe(true);
    // 40 pipes: a batch of 16 at first, then refills as the pool runs low (never one per COPY).
    expect(started.mkfifo).toBeLessThanOrEqual(4);
  });

  it("leaves a file already at a path as it is, as mkfifo would", async () => {
    const dir = await folder();
    const taken = path.join(dir, "data_0.parquet");
    await writeFile(taken, "DuckDB's file");
    await makePipes([taken, path.join(dir, "data_1.parquet")]);
    expect(await readFile(taken, "utf8")).toBe("DuckDB's file");
    expect((await lstat(path.join(dir, "data_1.parquet"))).isFIFO()).toBe(true);
  });

  it("removes the pool folders of processes no longer running at pool start, and keeps a running one's", async () => {
    const root = await folder();
    // A pid that ran and exited (its folder was left by a kill without an exit event).
    const child = spawn(process.execPath, ["-e", ""]);
    const dead = child.pid!;
    await new Promise((resolve) => child.once("exit", resolve));
    const stale = path.join(root, `ebb-pipes-${dead}-1700000000000`);
    const alive = path.join(root, `ebb-pipes-${process.pid}-1700000000000`);
    const other = path.join(root, "ebb-pipes-of-someone");
    for (const dir of [stale, alive, other]) await mkdir(dir);
    await writeFile(path.join(stale, "pipe-0"), "");
    sweepDeadPools(root);
    expect((await readdir(root)).sort()).toEqual([path.basename(alive), path.basename(other)].sort());
  });
});
