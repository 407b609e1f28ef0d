import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { SynthesizedEbb } from "./ebb-synthesis.ts";
import { EmbeddedAwsError } from "./errors.ts";
import { nodeScript } from "./stand-in-process.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The synthesis script: the stack is built from the sources it imports, and the dependencies' versions. */
const ENTRY = "infra/local/ebb-synthesis-main.ts";
const LOCKFILE = "package-lock.json";
/** A relative module named by `from "…"`, `import "…"` or `import("…")`. */
const RELATIVE_IMPORT = /\b(?:from|import)\s*\(?\s*["'](\.\.?\/[^"']+)["']/g;
const CACHE_DIR = path.join(ROOT, "node_modules", ".cache", "ebb-synthesis");
/** Synthesis takes ~15 s of CPU; on a 2-core machine shared by a test run and more it took over 120 s. */
const SYNTHESIS_TIMEOUT_MS = 600_000;

/**
 * The synthesized Ebb stack, from a cache keyed by a hash of everything it is built from, else
 * synthesized in a child process (ebb-synthesis-main.ts) and cached. Synthesis costs seconds of CPU
 * on every test run and `npm start`; a hit does not even load the CDK. The inputs are derived, not
 * listed: every source file the synthesis script imports, transitively, and the lockfile.
 */
export async function loadSynthesizedEbb(): Promise<SynthesizedEbb> {
  const file = path.join(CACHE_DIR, `${await inputsHash()}.json`);
  const cached = await readFile(file, "utf8").catch(() => undefined);
  if (cached !== undefined) return JSON.parse(cached) as SynthesizedEbb;

  const script = fileURLToPath(new URL("./ebb-synthesis-main.ts", import.meta.url));
  try {
    await promisify(execFile)(...nodeScript(script, [file]), { timeout: SYNTHESIS_TIMEOUT_MS });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? "";
    throw new EmbeddedAwsError(
      `could not synthesize the Ebb stack (run \`npm run synth\` to see why):\n${stderr}`,
      {
        cause: error,
      },
    );
  }
  return JSON.parse(await readFile(file, "utf8")) as SynthesizedEbb;
}

async function inputsHash(): Promise<string> {
  const hash = createHash("sha256");
  for (const file of [...(await importedSources(path.join(ROOT, ENTRY))), path.join(ROOT, LOCKFILE)]) {
    hash
      .update(path.relative(ROOT, file))
      .update("\0")
      .update(await readFile(file))
      .update("\0");
  }
  return hash.digest("hex").slice(0, 32);
}

/** `entry` and every source it imports by a relative path, transitively, sorted. */
async function importedSources(entry: string): Promise<string[]> {
  const seen = new Set<string>();
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = await readFile(file, "utf8");
    for (const [, relative] of text.matchAll(RELATIVE_IMPORT)) {
      await visit(path.resolve(path.dirname(file), relative as string));
    }
  };
  await visit(entry);
  return [...seen].sort();
}
