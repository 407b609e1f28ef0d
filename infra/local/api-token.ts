import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/**
 * The local API's bearer token. It is never printed: it lives in a 0600 file (`<data>/api-token`,
 * kept across restarts; in memory mode a fresh one in a private temp folder) and the start banner
 * says `export EBB_TOKEN=$(cat <file>)`, so it reaches no terminal log or scrollback.
 */
export interface ApiToken {
  readonly token: string;
  /** Absolute path of the 0600 file that holds it. */
  readonly file: string;
  /** The folder of the token's files (the data folder, or the private temp folder). */
  readonly dir: string;
}

export async function keepApiToken(dataDir: string | undefined): Promise<ApiToken> {
  const dir = dataDir ?? (await mkdtemp(path.join(os.tmpdir(), `ebb-token-${process.pid}-`)));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, "api-token");
  const kept = dataDir === undefined ? "" : (await readFile(file, "utf8").catch(() => "")).trim();
  if (kept) return { token: kept, file, dir };
  const token = randomBytes(24).toString("base64url");
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return { token, file, dir };
}

/** A path as a shell word: single-quoted, so spaces and `$` in it survive pasting. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
