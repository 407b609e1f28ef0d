import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { promisify } from "node:util";
import { StandInStartError } from "./errors.ts";

/**
 * The Apache Kafka broker's jars, from Maven Central (`kafka/pom.xml` pins the version): copied once by
 * `mvn dependency:copy-dependencies` into `node_modules/.cache/ebb-kafka/<version>/` (Maven's own
 * `~/.m2` keeps the downloads too), so later runs start the broker without the network.
 */

/** Kept in step with `kafka/pom.xml`. */
export const KAFKA_VERSION = "4.1.1";

const POM = fileURLToPath(new URL("./kafka/pom.xml", import.meta.url));
const CACHE = fileURLToPath(new URL("../../node_modules/.cache/ebb-kafka/", import.meta.url));
/** Written last, so a copy cut short is never taken for a complete one. */
const COMPLETE_MARKER = ".complete";
/** A cold ~/.m2 downloads ~55 MB of jars. */
const MAVEN_TIMEOUT_MS = 15 * 60_000;

/** The folder of jars to put on the class path, fetched first if missing. */
export async function kafkaLibs(): Promise<string> {
  const libs = path.join(CACHE, KAFKA_VERSION);
  if (existsSync(path.join(libs, COMPLETE_MARKER))) return libs;
  const partial = `${libs}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  try {
    await promisify(execFile)(
      "mvn",
      [
        "-B",
        "-q",
        "-f",
        POM,
        "dependency:copy-dependencies",
        `-DoutputDirectory=${partial}`,
        "-DincludeScope=runtime",
      ],
      { timeout: MAVEN_TIMEOUT_MS, maxBuffer: 16 << 20 },
    );
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw new StandInStartError(
      `could not fetch Apache Kafka ${KAFKA_VERSION} with Maven (\`mvn dependency:copy-dependencies -f ${POM}\`): install Maven (\`apt-get install maven\`) and let it reach Maven Central once`,
      { cause: error },
    );
  }
  if (!(await readdir(partial)).some((name) => name.startsWith(`kafka_2.13-${KAFKA_VERSION}`))) {
    throw new StandInStartError(`Maven copied no kafka_2.13-${KAFKA_VERSION} jar into ${partial}`);
  }
  await writeFile(path.join(partial, COMPLETE_MARKER), "");
  // Another process may have finished first: its copy is as good as ours.
  await rename(partial, libs).catch(async () => rm(partial, { recursive: true, force: true }));
  return libs;
}
