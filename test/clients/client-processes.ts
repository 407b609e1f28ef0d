import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

/**
 * Where the client-compatibility suite finds the Databricks clients that `test/clients/setup.sh`
 * installs, and how it runs them: as child processes, the way a user's job runs them.
 */

const run = promisify(execFile);

export const CLIENTS_DIR = path.resolve(import.meta.dirname, "../../.clients");
export const PYTHON = path.join(CLIENTS_DIR, "python", "bin", "python");

export function requireInstalled(file: string): string {
  if (!existsSync(file)) throw new Error(`${file} is missing: run bash test/clients/setup.sh first`);
  return file;
}

/** Runs a program; a non-zero exit fails with its output. */
export async function runProgram(
  program: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<string> {
  try {
    const { stdout } = await run(program, args, {
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...env },
      maxBuffer: 16 << 20,
    });
    return stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${path.basename(program)} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`,
    );
  }
}
