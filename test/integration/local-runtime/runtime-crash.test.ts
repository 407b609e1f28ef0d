import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EbbClient } from "../../../shared/client/ebb-client.ts";
import { bearerAuth } from "../../../shared/client/request-signer.ts";
import { processTree } from "../../support/listening-sockets.ts";
import { startRuntime, stopRuntime, type StartedRuntime } from "../../support/npm-start.ts";

/**
 * The local runtime SIGKILLed in the middle of an update, then started again on the same data folder:
 * the update it left RUNNING is FAILED with EXECUTION_LOST as the runtime starts, the next update is
 * accepted at once, and the table ends with every input row exactly once.
 */

const FILES = 20;

describe("the local runtime killed mid-update", () => {
  const made: string[] = [];
  let runtime: StartedRuntime | undefined;
  afterAll(async () => {
    if (runtime) await stopRuntime(runtime.child);
    for (const folder of made) await rm(folder, { recursive: true, force: true });
  });

  it("fails the lost update at restart; the next one lands every row exactly once", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "ebb-crash-data-"));
    const landing = await mkdtemp(path.join(os.tmpdir(), "ebb-crash-landing-"));
    made.push(dataDir, landing);
    for (let i = 1; i <= FILES; i++)
      await writeFile(path.join(landing, `f${String(i).padStart(3, "0")}.json`), `{"id": ${i}}\n`);

    runtime = await startRuntime(["--data-dir", dataDir, "--allow-local-path", landing]);
    const client = (started: StartedRuntime) =>
      new EbbClient({
        endpoint: started.banner.exports["EBB_ENDPOINT"]!,
        auth: bearerAuth(started.banner.token),
      });
    const { pipeline_id: pipelineId } = await client(runtime).createPipeline({
      name: "killed runtime",
      catalog: "crash",
      schema: "runtime",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "events",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT id FROM source",
                options: { max_files_per_batch: 1 },
              },
            ],
          },
        ],
      },
    });
    const { update_id: lost } = await client(runtime).startUpdate(pipelineId);
    for (;;) {
      const { update } = await client(runtime).getUpdate(pipelineId, lost);
      const batches = Object.values(update.progress ?? {}).reduce((n, flow) => n + flow.batches, 0);
      expect(update.state).not.toMatch(/COMPLETED|FAILED|CANCELED/);
      if (batches >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // SIGKILL: no clean-up of any kind; the stand-ins follow their parent out.
    const tree = processTree(runtime.child.pid!);
    const exited = new Promise((resolve) => runtime!.child.once("exit", resolve));
    runtime.child.kill("SIGKILL");
    await exited;
    const deadline = Date.now() + 60_000;
    while (tree.some((pid) => existsSync(`/proc/${pid}`)) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));

    runtime = await startRuntime(["--data-dir", dataDir, "--allow-local-path", landing]);
    expect(runtime.banner.lines.join("\n")).toContain(`(EXECUTION_LOST): ${lost}`);
    expect((await client(runtime).getUpdate(pipelineId, lost)).update).toMatchObject({
      state: "FAILED",
      error: { error_code: "EXECUTION_LOST" },
    });
    const started = Date.now();
    const { update_id: next } = await client(runtime).startUpdate(pipelineId);
    // Within seconds: this first call after the restart also loads the handler (a cold start).
    expect(Date.now() - started).toBeLessThan(15_000);
    const done = await client(runtime).waitForUpdate(pipelineId, next, { intervalMs: 200 });
    expect(done.state, done.error?.message).toBe("COMPLETED");
    const { rows } = await client(runtime).query("crash.runtime.events", {
      sql: "SELECT count(*) AS n, count(DISTINCT id) AS ids, min(id) AS lo, max(id) AS hi FROM t",
    });
    expect(rows).toEqual([{ n: FILES, ids: FILES, lo: 1, hi: FILES }]);
  });
});
