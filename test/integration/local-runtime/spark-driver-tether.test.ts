import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { isRunning, nodeScript } from "../../../infra/local/stand-in-process.ts";

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
    try {
      // The batch is in flight once the driver wrote its pids.
      const pids = await vi.waitFor(
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
    }
  });
});
