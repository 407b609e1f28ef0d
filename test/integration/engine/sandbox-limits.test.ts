import { describe, expect, it } from "vitest";
import {
  SqlLimitExceededError,
  TempSpaceExhaustedError,
  UpdateCanceledError,
} from "../../../shared/engine/errors.ts";
import { interruptAllSandboxes, Sandbox } from "../../../shared/engine/sandbox.ts";
import { DEFAULT_SQL_LIMITS, sqlLimitsFromEnv, type SqlLimits } from "../../../shared/engine/sql-limits.ts";
import { cappedTempFolders, withCappedTempFolder } from "../../support/capped-temp-folder.ts";

/** About 600 MB of rows in a temp table: with a small memory limit, most of it spills. */
const SPILLER = "SELECT i, md5(i::VARCHAR) AS a, md5(a) AS b FROM range(6000000) t(i)";

/** The review's runaway statement: runs for hours unless something stops it. */
const RUNAWAY = "SELECT sum(hash(i)) AS s FROM range(1000000000000) t(i)";

async function withSandbox<T>(
  limits: Partial<SqlLimits>,
  work: (sandbox: Sandbox) => Promise<T>,
  signal?: AbortSignal,
) {
  const sandbox = await Sandbox.open({ limits: { ...DEFAULT_SQL_LIMITS, ...limits }, signal });
  try {
    return await work(sandbox);
  } finally {
    await sandbox.close();
  }
}

describe("limits on user SQL", () => {
  it("a statement over its time limit is interrupted, with its own code naming the setting", async () => {
    const started = Date.now();
    const error = await withSandbox({ timeoutMs: 300 }, (s) =>
      s.runUserQuery(RUNAWAY, "out", 'flow "f"'),
    ).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error).toBeInstanceOf(SqlLimitExceededError);
    expect((error as SqlLimitExceededError).errorCode).toBe("SQL_TIME_LIMIT_EXCEEDED");
    expect((error as Error).message).toMatch(
      /flow "f" was stopped: it ran longer than 300 milliseconds.*EBB_SQL_TIMEOUT/,
    );
  });

  it("a statement over its memory limit fails with its own code", async () => {
    const error = await withSandbox({ memoryLimit: "40MB", tempLimit: "0MB" }, (s) =>
      s.runUserQuery("SELECT list(i) AS l FROM range(200000000) t(i)", "out", "the query"),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqlLimitExceededError);
    expect((error as SqlLimitExceededError).errorCode).toMatch(/^SQL_(MEMORY|TEMP_SPACE)_LIMIT_EXCEEDED$/);
    expect((error as Error).message).toMatch(/EBB_SQL_(MEMORY|TEMP)_LIMIT/);
  });

  it("a statement that spills past its spill limit is stopped there, with its own code", async () => {
    const error = await withSandbox({ memoryLimit: "64MB", tempLimit: "40MB" }, (s) =>
      s.runUserQuery(SPILLER, "out", 'flow "f"'),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqlLimitExceededError);
    expect((error as SqlLimitExceededError).errorCode).toBe("SQL_TEMP_SPACE_LIMIT_EXCEEDED");
    expect((error as Error).message).toMatch(
      /flow "f" was stopped: it spilled more than 40MB.*EBB_SQL_TEMP_LIMIT/,
    );
  });

  it.skipIf(!cappedTempFolders)(
    "a statement whose spill fills the disk below its limit fails as temp space exhausted, not as over its limit",
    async () => {
      const error = await withCappedTempFolder(30, (dir) =>
        withSandbox({ memoryLimit: "64MB", tempLimit: "256MB" }, async (s) => {
          expect(s.dir.startsWith(dir)).toBe(true);
          return s.runUserQuery(SPILLER, "out", 'flow "f"');
        }).catch((e: unknown) => e),
      );
      expect(error).toBeInstanceOf(TempSpaceExhaustedError);
      expect((error as TempSpaceExhaustedError).errorCode).toBe("TEMP_SPACE_EXHAUSTED");
      expect((error as Error).message).toMatch(
        /^flow "f" ran out of temporary space: the disk of \S+ebb-capped-\S+ is full \([\d.]+ \w+ free of 30 MB\)\. .*max_bytes_per_batch.*ephemeral storage/,
      );
    },
  );

  it("the sandbox carries its limits into DuckDB", async () => {
    await withSandbox({ memoryLimit: "300MB", tempLimit: "100MB" }, async (s) => {
      const [row] = await s.rows(
        "SELECT current_setting('memory_limit') AS m, current_setting('max_temp_directory_size') AS t",
      );
      expect(row).toEqual({ m: "286.1 MiB", t: "95.3 MiB" });
    });
  });

  it("each sandbox spills into its own folder, also when it took an instance created ahead", async () => {
    const dirs = await Promise.all(
      [0, 1, 2].map(() =>
        withSandbox({}, async (s) => {
          const [row] = await s.rows("SELECT current_setting('temp_directory') AS d");
          expect(row?.d).toBe(`${s.dir}/spill`);
          return row?.d;
        }),
      ),
    );
    expect(new Set(dirs).size).toBe(3);
  });

  it("a stop (the update's abort signal) interrupts a running statement", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const error = await withSandbox({}, (s) => s.runUserQuery(RUNAWAY, "out", "t"), controller.signal).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpdateCanceledError);
  });

  it("the query endpoint's cap stops the statement at the rows it returns", async () => {
    await withSandbox({ timeoutMs: 5_000 }, async (s) => {
      await s.runUserQuery("SELECT i FROM range(1000000000000) t(i)", "out", "the query", { maxRows: 11 });
      expect(await s.rows("SELECT count(*)::INTEGER AS n FROM out")).toEqual([{ n: 11 }]);
    });
  });

  it("reads its settings from the environment, refusing values it cannot read", () => {
    expect(sqlLimitsFromEnv({})).toEqual(DEFAULT_SQL_LIMITS);
    expect(sqlLimitsFromEnv({ EBB_SQL_TIMEOUT: "30 seconds", EBB_SQL_MEMORY_LIMIT: "2GB" })).toEqual({
      timeoutMs: 30_000,
      memoryLimit: "2GB",
      tempLimit: DEFAULT_SQL_LIMITS.tempLimit,
    });
    expect(() => sqlLimitsFromEnv({ EBB_SQL_TIMEOUT: "soon" })).toThrow(/EBB_SQL_TIMEOUT must be a duration/);
    expect(() => sqlLimitsFromEnv({ EBB_SQL_MEMORY_LIMIT: "1GB'; SET x" })).toThrow(
      /EBB_SQL_MEMORY_LIMIT must be a size/,
    );
  });
  // Last: after a shutdown this process refuses user SQL.
  it("a shutdown interrupts every running statement, and refuses later ones", async () => {
    setTimeout(interruptAllSandboxes, 300);
    const errors = await Promise.all(
      [1, 2].map(() => withSandbox({}, (s) => s.runUserQuery(RUNAWAY, "out", "t")).catch((e: unknown) => e)),
    );
    for (const error of errors) expect((error as Error).message).toMatch(/Ebb shut down/);
    const later = await withSandbox({}, (s) => s.runUserQuery("SELECT 1", "out", "t")).catch(
      (e: unknown) => e,
    );
    expect(later).toBeInstanceOf(UpdateCanceledError);
  });
});
