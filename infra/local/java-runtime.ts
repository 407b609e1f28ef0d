import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { JavaNotFoundError } from "./errors.ts";

/** DynamoDB Local 3.x is built for Java 17. */
const MIN_JAVA_MAJOR = 17;

const INSTALL_HINT = "install one with `apt-get install openjdk-17-jdk-headless` (or set JAVA_HOME)";

/** The `java` to run: `$JAVA_HOME/bin/java` when JAVA_HOME is set, else `java` on the PATH. */
export function javaCommand(env: NodeJS.ProcessEnv = process.env): string {
  const home = env["JAVA_HOME"];
  return home ? path.join(home, "bin", "java") : "java";
}

/**
 * Finds a Java runtime new enough for DynamoDB Local, or fails at once saying how to get one, so a
 * missing JRE never shows up later as a stand-in that "does not start".
 */
export async function findJava(command = javaCommand()): Promise<{ command: string; major: number }> {
  let banner: string;
  try {
    // `java -version` prints to stderr.
    const { stdout, stderr } = await promisify(execFile)(command, ["-version"], { timeout: 10_000 });
    banner = stderr + stdout;
  } catch (error) {
    throw new JavaNotFoundError(
      `DynamoDB Local needs Java ${MIN_JAVA_MAJOR}+ but \`${command}\` could not be run; ${INSTALL_HINT}`,
      {
        cause: error,
      },
    );
  }
  const major = javaMajorVersion(banner);
  if (major === undefined || major < MIN_JAVA_MAJOR) {
    const found = major === undefined ? "an unrecognised version" : `Java ${major}`;
    throw new JavaNotFoundError(
      `DynamoDB Local needs Java ${MIN_JAVA_MAJOR}+ but \`${command}\` is ${found}; ${INSTALL_HINT}`,
    );
  }
  return { command, major };
}

/** The major version in a `java -version` banner: `"17.0.15"` is 17, the old `"1.8.0_392"` is 8. */
export function javaMajorVersion(banner: string): number | undefined {
  const match = /version "(\d+)(?:\.(\d+))?/.exec(banner);
  if (!match) return undefined;
  const first = Number(match[1]);
  return first === 1 ? Number(match[2]) : first;
}
