import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { JavaNotFoundError } from "./errors.ts";

/**
 * The class that runs DynamoDB Local on loopback only, answering only its front
 * (dynamodb/LoopbackDynamoDbLocal.java, dynamodb-front.ts), compiled
 * once against the installed jar into `node_modules/.cache/ebb-dynamodb-local/<hash>/`, keyed by the
 * source and the jar's folder, so later starts cost nothing.
 */

export const LAUNCHER_CLASS = "LoopbackDynamoDbLocal";
const SOURCE = fileURLToPath(new URL(`./dynamodb/${LAUNCHER_CLASS}.java`, import.meta.url));
const CACHE = fileURLToPath(new URL("../../node_modules/.cache/ebb-dynamodb-local/", import.meta.url));
/** javac on a 2-core machine takes ~10 s; under a heavy load, minutes. */
const COMPILE_TIMEOUT_MS = 600_000;

/** The folder to put beside the jar on the class path. */
export async function dynamoDbLauncher(jar: string, java: string): Promise<string> {
  const hash = createHash("sha256").update(readFileSync(SOURCE)).update(jar).digest("hex").slice(0, 16);
  const classes = path.join(CACHE, hash);
  if (existsSync(path.join(classes, `${LAUNCHER_CLASS}.class`))) return classes;
  const partial = `${classes}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  const javac = path.join(path.dirname(java), "javac");
  try {
    await promisify(execFile)(
      existsSync(javac) ? javac : "javac",
      ["--release", "17", "-cp", jar, "-d", partial, SOURCE],
      { timeout: COMPILE_TIMEOUT_MS },
    );
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw new JavaNotFoundError(
      `could not compile ${SOURCE}, which keeps DynamoDB Local on 127.0.0.1: it needs a JDK's javac (17+); install one with \`apt-get install openjdk-17-jdk-headless\` (or set JAVA_HOME)`,
      { cause: error },
    );
  }
  // Another process may have finished first: its copy is as good as ours.
  await rename(partial, classes).catch(async () => rm(partial, { recursive: true, force: true }));
  return classes;
}
