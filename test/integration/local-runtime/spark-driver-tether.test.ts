import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { LocalSparkJobs } from "../../../functions/runtime/local-spark-jobs.ts";
import { isRunning, nodeScript } from "../../../infra/local/stand-in-process.ts";
import type { SparkBatchRequest } from "../../../shared/engine/spark/spark-batch-contract.ts";

/**
 * The local Spark driver dies with the process that started it, also mid-batch: the driver reads its
 * stdin only between batches, so it is tethered (infra/local/tether.ts `--stdin`). The driver here is
 * a shell script in the engine's place (this is about processes, not Spark): it answers ready, takes
 * its batch and then sleeps, deaf to its stdin, beside a child of its own (as the script's JVM).
 */
const FAKE_DRIVER = `#!/bin/sh
sleep 600 &
echo '{"ok":true,"ready":true,"applicationId":"fake"}'
read -r request || exit 1
echo "$$ $!" > "$FAKE_DRIVER_PIDS.tmp" && mv "$FAKE_DRIVER_PIDS.tmp" "$FAKE_DRIVER_PIDS"
exec sleep 600
`;

/**
 * A driver that answers its batches; the flow "stuck" never ends. It appends its pid and its child's to
 * `pids` as it starts, and touches `stuck` once its stuck batch runs.
 */
const answeringDriver = (folder: string) => `#!/bin/sh
sleep 600 &
echo "$$ $!" >> '${folder}/pids'
echo '{"ok":true,"ready":true,"applicationId":"fake"}'
while read -r request; do
  case "$request" in *'"flow":"stuck"'*) touch '${folder}/stuck'; sleep 600 ;; esac
  echo '{"ok":true,"manifest":{}}'
done
`;

const batch = (flow: string): SparkBatchRequest => ({
  flow,
  dataset: "raw",
  sql: "SELECT * FROM source",
  txn: { appId: `p/${flow}`, version: 1 },
  input: { kind: "files", format: "json", schema: null, uris: [] },
  output: { tableUri: "s3a://bucket/t", stagingPath: "spark/1-a", partitionColumns: [] },
  manifestUri: "s3a://bucket/m.json",
});

/** This process's children that exited and were not reaped. */
function zombieChildren(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        // "1234 (name) Z 1233 …": the state and the parent's pid follow the parenthesised name.
        const [state, ppid] = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").at(-1)!.split(" ");
        return state === "Z" && Number(ppid) === process.pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A failed run leaves nothing behind for ten minutes: each driver (`[pid, …]`) leads its own group. */
function killGroups(drivers: readonly (readonly number[])[]): void {
  for (const [group] of drivers) {
    try {
      if (group !== undefined) process.kill(-group, "SIGKILL");
    } catch {
      // Gone, as it should be.
    }
  }
}

describe("the local Spark driver", () => {
  const folders: string[] = [];
  afterAll(async () => {
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  it("is gone within seconds of its owner's kill -9, while its batch runs", async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), "ebb-spark-tether-"));
    folders.push(folder);
    const driver = path.join(folder, "driver.sh");
    await writeFile(driver, FAKE_DRIVER);
    await chmod(driver, 0o755);
    const pidsFile = path.join(folder, "pids");
    const owner = spawn(
      ...nodeScript(fileURLToPath(new URL("../../support/spark-driver-owner.ts", import.meta.url)), [
        driver,
        folder,
      ]),
      { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, FAKE_DRIVER_PIDS: pidsFile } },
    );
    let pids: number[] = [];
    try {
      // The batch is in flight once the driver wrote its pids.
      pids = await vi.waitFor(
        async () => (await readFile(pidsFile, "utf8")).trim().split(" ").map(Number),
        // Two tsx starts (the owner, the tether): tens of seconds each under a heavy load.
        { timeout: 240_000, interval: 100 },
      );
      expect(pids).toHaveLength(2);
      expect(pids.every(isRunning)).toBe(true);
      owner.kill("SIGKILL");
      await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]), { timeout: 60_000, interval: 100 });
    } finally {
      owner.kill("SIGKILL");
      killGroups([pids]);
    }
  });

  it("fails the batch of a driver that died, starts another for the next, and leaves nothing after close", async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), "ebb-spark-tether-"));
    folders.push(folder);
    const driver = path.join(folder, "driver.sh");
    await writeFile(driver, answeringDriver(folder));
    await chmod(driver, 0o755);
    const spark = new LocalSparkJobs({ python: driver, jars: folder, bucket: "bucket" });
    const started = async () =>
      (await readFile(path.join(folder, "pids"), "utf8"))
        .trim()
        .split("\n")
        .map((line) => line.split(" ").map(Number));
    try {
      expect((await spark.run(batch("ingest"))).failure).toBeUndefined();
      const stuck = spark.run(batch("stuck"));
      await vi.waitFor(() => readFile(path.join(folder, "stuck")), { timeout: 60_000, interval: 100 });
      spark.kill();
      expect((await stuck).failure?.message).toBe("the Spark driver exited during the job");
      expect((await spark.run(batch("ingest"))).failure).toBeUndefined();
      const [first, second] = await started();
      expect(second).toHaveLength(2);
      await vi.waitFor(() => expect(first!.filter(isRunning)).toEqual([]), {
        timeout: 60_000,
        interval: 100,
      });
      expect(second!.every(isRunning)).toBe(true);
      await spark.close();
      await vi.waitFor(() => expect(second!.filter(isRunning)).toEqual([]), {
        timeout: 60_000,
        interval: 100,
      });
      expect(zombieChildren()).toEqual([]);
    } finally {
      spark.kill();
      killGroups(await started().catch(() => []));
    }
  });
});
