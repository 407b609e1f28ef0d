import { spawnSync } from "node:child_process";
import { access, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeLeftoverScratchFolders } from "../../../shared/duck/scratch-folder.ts";
import { SandboxViolationError } from "../../../shared/engine/errors.ts";
import { Sandbox } from "../../../shared/engine/sandbox.ts";
import { DEFAULT_SQL_LIMITS } from "../../../shared/engine/sql-limits.ts";

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

/**
 * A closed sandbox's locked instance and folder go to the next sandbox of the process (sandbox-pool.ts),
 * with nothing of the last one's work left. Each test has limits of its own: a pool of its own.
 */
describe("a sandbox after another", () => {
  const limits = (tempLimit: string) => ({ ...DEFAULT_SQL_LIMITS, tempLimit });

  it("takes the last one's instance and folder, emptied: no file, no TEMP table, the lock-down kept", async () => {
    const first = await Sandbox.open({ limits: limits("101MB") });
    const file = await first.writeFile(new TextEncoder().encode('{"a": 1}\n'), ".json");
    await first.runUserQuery(`SELECT * FROM read_json('${file}')`, "kept_rows", "test flow");
    await first.run("CREATE TEMP VIEW kept_view AS SELECT 1 AS x");
    await first.close();
    const second = await Sandbox.open({ limits: limits("101MB") });
    try {
      expect(second.dir).toBe(first.dir);
      expect(await exists(file)).toBe(false);
      const names = await second.rows(
        "SELECT table_name FROM information_schema.tables WHERE table_name IN ('kept_rows', 'kept_view')",
      );
      expect(names).toEqual([]);
      await expect(second.run("SET enable_external_access = true")).rejects.toBeInstanceOf(
        SandboxViolationError,
      );
      await expect(
        second.runUserQuery(`SELECT * FROM glob('${tmpdir()}/*')`, "out", "test flow"),
      ).rejects.toBeInstanceOf(SandboxViolationError);
      const [zone] = await second.rows("SELECT current_setting('TimeZone') AS zone");
      expect(zone?.["zone"]).toBe("UTC");
      const [temp] = await second.rows("SELECT current_setting('max_temp_directory_size') AS t");
      expect(String(temp?.["t"])).toMatch(/^96\.3 MiB|^101/);
    } finally {
      await second.close();
    }
  });

  it("does not take an instance a statement failed on, nor a folder with spill files left", async () => {
    const failed = await Sandbox.open({ limits: limits("102MB") });
    await expect(failed.runUserQuery("SELECT * FROM no_such_table", "out", "test flow")).rejects.toThrow();
    await failed.close();
    const spilled = await Sandbox.open({ limits: limits("102MB") });
    expect(spilled.dir).not.toBe(failed.dir);
    expect(await exists(failed.dir)).toBe(false);
    await mkdir(path.join(spilled.dir, "spill"), { recursive: true });
    await writeFile(path.join(spilled.dir, "spill", "duckdb_temp_block-1.block"), "rows");
    await spilled.close();
    const next = await Sandbox.open({ limits: limits("102MB") });
    try {
      expect(next.dir).not.toBe(spilled.dir);
      expect(await exists(spilled.dir)).toBe(false);
    } finally {
      await next.close();
    }
  });
  it("does not take an instance whose folder is gone (its temp folder removed)", async () => {
    const first = await Sandbox.open({ limits: limits("103MB") });
    await first.close();
    await rm(first.dir, { recursive: true, force: true });
    const next = await Sandbox.open({ limits: limits("103MB") });
    try {
      expect(next.dir).not.toBe(first.dir);
      const [row] = await next.rows("SELECT 42 AS answer");
      expect(row?.["answer"]).toBe(42);
    } finally {
      await next.close();
    }
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
