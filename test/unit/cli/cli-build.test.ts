import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import packageJson from "../../../package.json" with { type: "json" };
import { builtCli } from "../../../shared/cli/cli-build.mjs";

/**
 * The `ebb` command runs the CLI built to JavaScript (shared/cli/cli-build.mjs): the build of the
 * sources as they are, never an older one, and `ebb --help` loads no package but commander.
 */
describe("the built ebb CLI", () => {
  let root: string;
  const place = () => ({ root, cacheDir: path.join(root, "cache") });
  const source = (file: string, text: string) =>
    mkdir(path.dirname(path.join(root, file)), { recursive: true }).then(() =>
      writeFile(path.join(root, file), text),
    );
  const run = async () => {
    const { runCli } = (await import((await builtCli(place()))!)) as { runCli: () => Promise<string> };
    return runCli();
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "ebb-cli-build-"));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("runs the sources as they are now: an edited source is built again, never run old", async () => {
    await source(
      "shared/cli/main.ts",
      'import { said } from "./said.ts";\nexport const runCli = async () => said;\n',
    );
    await source("shared/cli/said.ts", 'export const said: string = "first";\n');
    expect(await run()).toBe("first");
    const first = await builtCli(place());
    expect(await builtCli(place())).toBe(first);
    await source("shared/cli/said.ts", 'export const said: string = "second";\n');
    expect(await run()).toBe("second");
    // A source the edit newly imports is part of the next build's key too.
    await source("shared/cli/said.ts", 'export { said } from "./other.ts";\n');
    await source("shared/cli/other.ts", 'export const said = "third";\n');
    expect(await run()).toBe("third");
    await source("shared/cli/other.ts", 'export const said = "fourth";\n');
    expect(await run()).toBe("fourth");
  });

  it("`ebb --help` loads no package but commander: each command group is a chunk of its own", async () => {
    const main = fileURLToPath((await builtCli())!);
    const packages = new Set<string>();
    const seen = new Set<string>();
    const visit = async (file: string): Promise<void> => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = await readFile(file, "utf8");
      // Static imports only: `import … from "…"` at the start of a line (dynamic ones are `import(`).
      for (const [, specifier] of text.matchAll(/^import\s[^;]*?from\s+"([^"]+)";?$/gms)) {
        if (specifier!.startsWith(".")) await visit(path.resolve(path.dirname(file), specifier!));
        else if (!specifier!.startsWith("node:")) packages.add(specifier!);
      }
    };
    await visit(main);
    expect([...packages]).toEqual(["commander"]);
  });

  it("`ebb --version` through the bin prints the package's version", async () => {
    const bin = fileURLToPath(new URL("../../../shared/cli/ebb.mjs", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [bin, "--version"]);
    expect(stdout).toBe(`${packageJson.version}\n`);
  });
});
