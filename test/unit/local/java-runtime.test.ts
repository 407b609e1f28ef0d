import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { JavaNotFoundError } from "../../../infra/local/errors.ts";
import { findJava, javaMajorVersion } from "../../../infra/local/java-runtime.ts";

describe("javaMajorVersion", () => {
  it.each([
    ['openjdk version "17.0.15" 2025-04-15', 17],
    ['openjdk version "21" 2023-09-19', 21],
    ['java version "1.8.0_392"', 8],
    ["something else", undefined],
  ])("reads %s as %s", (banner, major) => {
    expect(javaMajorVersion(banner)).toBe(major);
  });
});

describe("findJava", () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  /** A fake `java` that prints `banner` to stderr, as `java -version` does. */
  async function fakeJava(banner: string): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), "ebb-java-"));
    dirs.push(dir);
    const file = path.join(dir, "java");
    await writeFile(file, `#!/bin/sh\necho '${banner}' >&2\n`);
    await chmod(file, 0o755);
    return file;
  }

  it("accepts Java 17", async () => {
    expect((await findJava(await fakeJava('openjdk version "17.0.15" 2025-04-15'))).major).toBe(17);
  });

  it("refuses Java 8, saying how to install 17", async () => {
    const found = findJava(await fakeJava('java version "1.8.0_392"'));
    await expect(found).rejects.toThrow(JavaNotFoundError);
    await expect(found).rejects.toThrow(
      /is Java 8; install one with `apt-get install openjdk-17-jdk-headless`/,
    );
  });

  it("fails at once when there is no java, saying how to install it", async () => {
    await expect(findJava("/nonexistent/bin/java")).rejects.toThrow(
      /apt-get install openjdk-17-jdk-headless/,
    );
  });
});
