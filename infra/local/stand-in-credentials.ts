import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SigV4Credentials } from "./sigv4-verifier.ts";

/**
 * The key pair the embedded S3 and the Step Functions endpoint accept: made once per data folder and
 * kept there, so exports a user pasted keep working after a restart; fresh for each run in memory.
 * No other runtime on the machine shares it, so finding the ports is not enough to reach the data.
 * Like the API token, the secret is never printed: it sits in a 0600 file of its own, so the start
 * banner can say `export AWS_SECRET_ACCESS_KEY=$(cat <file>)`.
 */

const ACCESS_KEY_ID_FILE = "aws-access-key-id";
export const SECRET_ACCESS_KEY_FILE = "aws-secret-access-key";

export async function keepStandInCredentials(dataDir: string | undefined): Promise<SigV4Credentials> {
  if (dataDir !== undefined) {
    const [accessKeyId, secretAccessKey] = await Promise.all(
      [ACCESS_KEY_ID_FILE, SECRET_ACCESS_KEY_FILE].map(async (name) =>
        (await readFile(path.join(dataDir, name), "utf8").catch(() => "")).trim(),
      ),
    );
    if (accessKeyId && secretAccessKey) return { accessKeyId, secretAccessKey };
  }
  const credentials = newCredentials();
  if (dataDir !== undefined) await writeStandInCredentials(dataDir, credentials);
  return credentials;
}

/** Writes both files (0600) into `dir`; the secret's is `<dir>/aws-secret-access-key`. */
export async function writeStandInCredentials(dir: string, credentials: SigV4Credentials): Promise<void> {
  await writeFile(path.join(dir, ACCESS_KEY_ID_FILE), `${credentials.accessKeyId}\n`, { mode: 0o600 });
  await writeFile(path.join(dir, SECRET_ACCESS_KEY_FILE), `${credentials.secretAccessKey}\n`, {
    mode: 0o600,
  });
}

/** Shaped like AWS's: a 20-character upper-case key id, a 40-character secret. */
function newCredentials(): SigV4Credentials {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const id = [...randomBytes(16)].map((byte) => alphabet[byte % 32]).join("");
  return { accessKeyId: `EBBL${id}`, secretAccessKey: randomBytes(30).toString("base64url") };
}
