import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keepApiToken, shellQuote } from "../../../infra/local/api-token.ts";
import { restrictToOwner } from "../../../infra/local/owner-only.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "owner-only-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const mode = async (file: string) => (await stat(file)).mode & 0o777;

describe("the local runtime's files are its owner's alone", () => {
  it("a data folder written by a looser run becomes 0700 folders and 0600 files", async () => {
    const data = path.join(root, ".ebb");
    await mkdir(path.join(data, "s3", "bucket"), { recursive: true });
    await writeFile(path.join(data, "s3", "bucket", "object"), "x");
    await writeFile(path.join(data, "api-token"), "t");
    for (const dir of [data, path.join(data, "s3"), path.join(data, "s3", "bucket")]) await chmod(dir, 0o755);
    await chmod(path.join(data, "s3", "bucket", "object"), 0o644);
    await restrictToOwner(data);
    expect(await mode(data)).toBe(0o700);
    expect(await mode(path.join(data, "s3", "bucket"))).toBe(0o700);
    expect(await mode(path.join(data, "s3", "bucket", "object"))).toBe(0o600);
  });

  it("the token is kept in a 0600 file and read back on restart", async () => {
    const data = path.join(root, "data");
    const first = await keepApiToken(data);
    expect(first.file).toBe(path.join(data, "api-token"));
    expect(await mode(first.file)).toBe(0o600);
    expect(await mode(data)).toBe(0o700);
    expect((await keepApiToken(data)).token).toBe(first.token);
  });

  it("in memory mode the token gets a private folder of its own", async () => {
    const token = await keepApiToken(undefined);
    try {
      expect(path.basename(token.dir)).toMatch(new RegExp(`^ebb-token-${process.pid}-`));
      expect(await mode(token.dir)).toBe(0o700);
      expect((await readFile(token.file, "utf8")).trim()).toBe(token.token);
    } finally {
      await rm(token.dir, { recursive: true, force: true });
    }
  });

  it("the printed export line reads the file, and survives a path with spaces and quotes", async () => {
    const odd = path.join(root, "it's a $folder");
    const token = await keepApiToken(odd);
    const line = `export EBB_TOKEN=$(cat ${shellQuote(token.file)})`;
    expect(line).not.toContain(token.token);
    expect(execFileSync("bash", ["-c", `${line}; printf %s "$EBB_TOKEN"`], { encoding: "utf8" })).toBe(
      token.token,
    );
  });
});
