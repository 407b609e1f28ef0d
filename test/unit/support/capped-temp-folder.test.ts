import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cappedTempFolders, mountCappedFolder } from "../../support/capped-temp-folder.ts";

const mounted = (dir: string) => readFileSync("/proc/mounts", "utf8").includes(` ${dir} `);

describe.skipIf(!cappedTempFolders)("capped temp folders", () => {
  it("unmount, at their next use, the mounts a killed test process left; a running process's are kept", async () => {
    const child = spawn(process.execPath, ["-e", ""]);
    const dead = child.pid!;
    await new Promise((resolve) => child.once("exit", resolve));
    // As a test process killed mid-run leaves it: mounted, never unmounted.
    const stale = mkdtempSync(path.join(tmpdir(), `ebb-capped-${dead}-`));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", stale]);
    const mine = mountCappedFolder(1);
    try {
      const next = mountCappedFolder(1);
      next.unmount();
      expect(mounted(stale)).toBe(false);
      expect(existsSync(stale)).toBe(false);
      expect(mounted(mine.dir)).toBe(true);
    } finally {
      mine.unmount();
      if (mounted(stale)) execFileSync("umount", ["-l", stale]);
    }
  });
});
