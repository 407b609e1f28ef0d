import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { SynthesizedEbb } from "./ebb-synthesis.ts";
import { EmbeddedAwsError } from "./errors.ts";
import { nodeScript } from "./stand-in-process.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Everything the synthesized stack is built from: the CDK app's sources and every dependency's version. */
const INPUTS = [
  "infra/aws",
  // The functions' environment variable names, which the stack writes into the template.
  "functions/runtime/environment.ts",
  "shared/store/repository-tables.ts",
  "shared/store/table-schemas.ts",
  // The task table the state machine is built from (names, retries, timeouts).
  "shared/control/update-tasks.ts",
  "infra/local/ebb-synthesis.ts",
  "infra/local/ebb-synthesis-main.ts",
  "package-lock.json",
];
const CACHE_DIR = path.join(ROOT, "node_modules", ".cache", "ebb-synthesis");

/**
 * The synthesized Ebb stack, from a cache keyed by a hash of everything it is built from, else
 * synthesized in a child process (ebb-synthesis-main.ts) and cached. Synthesis costs seconds of CPU
 * on every test run and `npm start`; a hit does not even load the CDK. An entry cannot be stale as
 * long as the stack is built only from `INPUTS`, which is where the stack and its table schemas live.
 */
export async function loadSynthesizedEbb(): Promise<SynthesizedEbb> {
  const file = path.join(CACHE_DIR, `${await inputsHash()}.json`);
  const cached = await readFile(file, "utf8").catch(() => undefined);
  if (cached !== undefined) return JSON.parse(cached) as SynthesizedEbb;

  const script = fileURLToPath(new URL("./ebb-synthesis-main.ts", import.meta.url));
  try {
    await promisify(execFile)(...nodeScript(script, [file]), { timeout: 120_000 });
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
  for (const input of INPUTS) {
    for (const file of await filesIn(path.join(ROOT, input))) {
      hash
        .update(path.relative(ROOT, file))
        .update("\0")
        .update(await readFile(file))
        .update("\0");
    }
  }
  return hash.digest("hex").slice(0, 32);
}

async function filesIn(target: string): Promise<string[]> {
  try {
    const entries = await readdir(target, { recursive: true, withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return [target];
    throw error;
  }
}
