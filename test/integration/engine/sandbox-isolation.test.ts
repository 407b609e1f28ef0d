import { spawnSync } from "node:child_process";
import { access, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeLeftoverScratchFolders } from "../../../shared/duck/scratch-folder.ts";
import { SandboxViolationError } from "../../../shared/engine/errors.ts";
import { Sandbox } from "../../../shared/engine/sandbox.ts";

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** Each sandbox has a temp folder of its own: one pipeline's SQL cannot read another's spill files. */
describe("sandbox isolation", () => {
  let first: Sandbox;
  let second: Sandbox;
  beforeAll(async () => {
    [first, second] = await Promise.all([Sandbox.open(), Sandbox.open()]);
  });
  afterAll(async () => {
    await Promise.all([first.close(), second.close()]);
  });

  it("spills inside its own folder", async () => {
    const [row] = await first.rows("SELECT current_setting('temp_directory') AS t");
    expect(String(row?.["t"])).toBe(path.join(first.dir, "spill"));
  });

  it("cannot read another sandbox's folder or spill files, nor the process's .tmp", async () => {
    await mkdir(path.join(first.dir, "spill"), { recursive: true });
    await writeFile(path.join(first.dir, "spill", "duckdb_temp_block-1.block"), "secret");
    for (const sql of [
      `SELECT * FROM glob('${first.dir}/spill/*')`,
      `SELECT * FROM read_text('${first.dir}/spill/duckdb_temp_block-1.block')`,
      `SELECT * FROM glob('${process.cwd()}/.tmp/*')`,
      `SELECT * FROM glob('${tmpdir()}/ebb-*/**')`,
    ]) {
      await expect(second.runUserQuery(sql, "out", "test flow"), sql).rejects.toBeInstanceOf(
        SandboxViolationError,
      );
    }
  });

  it("removes its folder, spill files included, when closed", async () => {
    const sandbox = await Sandbox.open();
    await mkdir(path.join(sandbox.dir, "spill"), { recursive: true });
    await writeFile(path.join(sandbox.dir, "spill", "block"), "x");
    await sandbox.close();
    expect(await exists(sandbox.dir)).toBe(false);
  });
});

describe("leftover scratch folders", () => {
  it("are removed at start-up when their process is gone, and kept while it lives", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "scratch-root-"));
    try {
      const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
      const leftover = path.join(root, `ebb-sandbox-${dead}-AbC123`);
      const live = path.join(root, `ebb-sandbox-${process.pid}-XyZ789`);
      const other = path.join(root, "not-ebb-123456");
      for (const dir of [leftover, live, other]) await mkdir(path.join(dir, "spill"), { recursive: true });
      expect(await removeLeftoverScratchFolders(root)).toEqual([leftover]);
      expect([await exists(leftover), await exists(live), await exists(other)]).toEqual([false, true, true]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("names its folders after the process that owns them", async () => {
    const sandbox = await Sandbox.open();
    try {
      expect(path.basename(sandbox.dir)).toMatch(new RegExp(`^ebb-sandbox-${process.pid}-`));
    } finally {
      await sandbox.close();
    }
  });
});
