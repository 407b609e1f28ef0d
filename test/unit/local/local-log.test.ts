import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { logger } from "../../../functions/runtime/ebb-logger.ts";
import { routeLocalLog } from "../../../infra/local/local-log.ts";

/**
 * A log line the file refuses (on a full disk: ENOSPC) goes to stderr and never fails the request or
 * task it describes: a throwing sink answered every API request with 500 INTERNAL_ERROR.
 */

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  vi.restoreAllMocks();
});

it("a line the log file refuses goes to stderr, and logging does not throw", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ebb-log-"));
  try {
    const stderr = vi.spyOn(console, "error").mockImplementation(() => undefined);
    // A folder where the file should be: every append fails (EISDIR), as a full disk's ENOSPC does.
    restore = routeLocalLog({ file: dir });
    expect(() => logger.info("request", { route: "/api/2.0/pipelines" })).not.toThrow();
    expect(() => logger.info("request", { route: "/api/2.0/pipelines" })).not.toThrow();
    const printed = stderr.mock.calls.map(([line]) => String(line));
    expect(printed.filter((line) => line.includes("cannot be written (EISDIR)"))).toHaveLength(1);
    expect(printed.filter((line) => line.includes('"route":"/api/2.0/pipelines"'))).toHaveLength(2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
