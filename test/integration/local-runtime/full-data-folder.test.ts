import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, statfs, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CONTROL_PLANE_RESERVE_BYTES } from "../../../infra/local/s3rver-disk-writes.ts";
import { EbbClient, type EventInfo } from "../../../shared/client/ebb-client.ts";
import { bearerAuth } from "../../../shared/client/request-signer.ts";
import { cappedTempFolders, mountCappedFolder } from "../../support/capped-temp-folder.ts";
import { startRuntime, stopRuntime, type Banner } from "../../support/npm-start.ts";

/**
 * `npm start` whose data folder fills during an update (a 64 MB tmpfs and a filler): the update is
 * never left RUNNING in silence (it was: DynamoDB Local took no event on the full disk and the event
 * writer retried forever, and a log file that could not be written turned every request into a 500).
 * It fails with DATA_FOLDER_FULL naming the folder and its free space, in its error and its flow's
 * ERROR event; once the filler is gone the next update lands every row exactly once.
 */

const FILES = 8;
const ROWS_PER_FILE = 400;

let child: ChildProcess | undefined;
let banner: Banner;
let folder: { dir: string; unmount(): void } | undefined;
let landing: string;

beforeAll(async () => {
  if (!cappedTempFolders) return;
  folder = mountCappedFolder(64);
  landing = await mkdtemp(path.join(os.tmpdir(), "ebb-full-landing-"));
  // Random text does not compress: each file is about 1 MB of Parquet.
  for (let i = 0; i < FILES; i++) {
    const lines = Array.from({ length: ROWS_PER_FILE }, (_, row) =>
      JSON.stringify({ id: i * ROWS_PER_FILE + row, payload: randomBytes(1300).toString("base64") }),
    );
    await writeFile(path.join(landing, `f${i}.json`), lines.join("\n") + "\n");
  }
  ({ child, banner } = await startRuntime(["--data-dir", folder.dir, "--allow-local-path", landing]));
});

afterAll(async () => {
  if (child) await stopRuntime(child);
  folder?.unmount();
  if (landing) await rm(landing, { recursive: true, force: true });
});

async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir);
  return stats.bavail * stats.bsize;
}

it.skipIf(!cappedTempFolders)(
  "an update whose writes no longer fit fails naming the data folder; after space returns the next lands every row once",
  async () => {
    const client = new EbbClient({
      endpoint: banner.exports["EBB_ENDPOINT"]!,
      auth: bearerAuth(banner.token),
    });
    const { pipeline_id: pipelineId } = await client.createPipeline({
      name: "full data folder",
      catalog: "full",
      schema: "disk",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "blobs",
            flows: [
              {
                name: "ingest",
                source: {
                  type: "auto_loader",
                  path: landing,
                  format: "json",
                  schema: { id: "BIGINT", payload: "STRING" },
                },
                sql: "SELECT id, payload FROM source",
                options: { max_files_per_batch: 2 },
              },
            ],
          },
        ],
      },
    });

    // The data folder fills: a filler leaves 2 MB past the embedded S3's reserve, and the batches
    // (about 2.5 MB of Parquet each) no longer fit.
    const filler = path.join(folder!.dir, "filler");
    const leave = CONTROL_PLANE_RESERVE_BYTES + 2 * 1024 * 1024;
    await writeFile(filler, Buffer.alloc(Math.max(0, (await freeBytes(folder!.dir)) - leave)));

    const { update_id: full } = await client.startUpdate(pipelineId);
    const failed = await client.waitForUpdate(pipelineId, full, { intervalMs: 500, timeoutMs: 240_000 });
    expect(failed).toMatchObject({ state: "FAILED", error: { error_code: "DATA_FOLDER_FULL" } });
    expect(failed.error?.message).toContain(folder!.dir);
    expect(failed.error?.message).toMatch(/data folder is full .*MB free/);
    const { events } = await client.events(pipelineId, { max_results: 100 });
    const flowFailed = events.find((e) => e.event_type === "flow_progress" && e.level === "ERROR") as
      (EventInfo & { error?: { exceptions: { message: string }[] } }) | undefined;
    expect(flowFailed?.error?.exceptions[0]?.message).toMatch(/data folder is full .*MB free/);

    // Room again: the next update lands every row exactly once.
    await rm(filler);
    const { update_id: next } = await client.startUpdate(pipelineId);
    const done = await client.waitForUpdate(pipelineId, next, { intervalMs: 500, timeoutMs: 240_000 });
    expect(done.state, done.error?.message).toBe("COMPLETED");
    const { rows } = await client.query("full.disk.blobs", {
      sql: "SELECT count(*) AS n, count(DISTINCT id) AS ids FROM t",
    });
    expect(rows).toEqual([{ n: FILES * ROWS_PER_FILE, ids: FILES * ROWS_PER_FILE }]);
  },
  600_000,
);
