import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { EmbeddedAwsError } from "./errors.ts";
import { isRunning } from "./stand-in-process.ts";

/** The file naming the process that owns a data folder. */
const LOCK_FILE = "owner.pid";

/**
 * Claims a data folder for this process, so two `npm start`s never run two DynamoDB Locals on one
 * database file. A lock left by a process that no longer runs (killed with SIGKILL) is taken over.
 * Returns the release function.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, LOCK_FILE);
  for (;;) {
    try {
      await writeFile(file, String(process.pid), { flag: "wx" });
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = Number(await readFile(file, "utf8").catch(() => ""));
    if (Number.isInteger(owner) && owner > 0 && isRunning(owner)) {
      throw new EmbeddedAwsError(
        `the data folder ${dataDir} is in use by process ${owner}; stop that one first, or choose another folder (--data-dir)`,
      );
    }
    await rm(file, { force: true });
  }
}
