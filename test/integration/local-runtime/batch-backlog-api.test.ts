import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withDuckSession } from "../../../shared/duck/duck-session.ts";
import { quoteLiteral } from "../../../shared/duck/sql-text.ts";
import { cappedTempFolders, withCappedTempFolder } from "../../support/capped-temp-folder.ts";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Batches that fit the function, through the HTTP API on the local runtime (issue 34), its task
 * functions' temporary folder a 12 MB tmpfs (as a Lambda's `/tmp`, smaller): a backlog ten times the
 * folder runs to completion in batches within the flow's byte bound, every row exactly once; a batch
 * planned larger than the folder now holds (its bound set for a bigger function) fills the disk, is
 * re-planned in halves in the same update, and completes, the event log saying so.
 */

const CAP_MB = 12;
/** Rows per file: ~2.6 MB of Parquet (eight md5 strings a row barely compress). */
const ROWS_PER_FILE = 10_000;

let cp: TestControlPlane;
beforeAll(async () => {
  if (cappedTempFolders) cp = await startTestControlPlane();
});
afterAll(() => cp?.close());

/** `files` Parquet files of ROWS_PER_FILE rows `(id, payload)` in a fresh landing folder, made outside the cap. */
async function landBacklog(files: number): Promise<string> {
  const folder = path.join(cp.landing, randomUUID().slice(0, 8));
  await mkdir(folder);
  const payload = [..."abcdefgh"].map((salt) => `md5(id::VARCHAR || '${salt}')`).join(" || ");
  await withDuckSession(async (duck) => {
    for (let f = 0; f < files; f++) {
      const file = path.join(folder, `part-${String(f).padStart(3, "0")}.parquet`);
      await duck.run(
        `COPY (SELECT id, ${payload} AS payload FROM (SELECT ${f * ROWS_PER_FILE} + i AS id FROM range(${ROWS_PER_FILE}) t(i))) ` +
          `TO ${quoteLiteral(file)} (FORMAT parquet)`,
      );
    }
  });
  return folder;
}

async function ingestPipeline(folder: string, bound: string): Promise<{ id: string; table: string }> {
  const schema = `backlog_${randomUUID().slice(0, 8)}`;
  const created = await cp.client.createPipeline({
    name: schema,
    catalog: "main",
    schema,
    definition: {
      datasets: [
        {
          type: "streaming_table",
          name: "raw",
          flows: [
            {
              name: "ingest",
              source: { type: "auto_loader", path: `${folder}/`, format: "parquet" },
              sql: "SELECT * FROM source",
              options: { max_bytes_per_batch: bound },
            },
          ],
        },
      ],
    },
  });
  return { id: created.pipeline_id, table: `main.${schema}.raw` };
}

/** Runs an update with the task functions' temporary folder capped; answers its final state. */
async function cappedUpdate(pipelineId: string) {
  return withCappedTempFolder(CAP_MB, async () => {
    const { update_id } = await cp.client.startUpdate(pipelineId);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  });
}

async function counts(table: string): Promise<{ rows: number; ids: number }> {
  const { rows } = await cp.client.query(table, {
    sql: "SELECT count(*)::BIGINT AS n, count(DISTINCT id)::BIGINT AS d FROM t",
  });
  return { rows: Number(rows[0]!["n"]), ids: Number(rows[0]!["d"]) };
}

async function events(pipelineId: string, updateId: string, filter: string) {
  const { events } = await cp.client.events(pipelineId, {
    filter: `origin.update_id = '${updateId}' AND ${filter}`,
    max_results: 100,
  });
  return events;
}

describe.skipIf(!cappedTempFolders)("batches that fit the function, through the API", () => {
  it("a backlog ten times the temporary folder runs to completion in bounded batches, exactly once", async () => {
    const files = 48;
    const pipeline = await ingestPipeline(await landBacklog(files), "8mb");
    const update = await cappedUpdate(pipeline.id);
    expect(update.state).toBe("COMPLETED");
    expect(await counts(pipeline.table)).toEqual({ rows: files * ROWS_PER_FILE, ids: files * ROWS_PER_FILE });
    // 125 MB; three files (7.8 MB) a batch within the 8 MB bound: none re-planned.
    const progress = await events(pipeline.id, update.update_id, "event_type = 'flow_progress'");
    const batches = progress.filter((e) => JSON.stringify(e.details).includes('"num_output_rows"'));
    expect(batches).toHaveLength(files / 3);
    expect(await events(pipeline.id, update.update_id, "level = 'WARN'")).toEqual([]);
  });

  it("a batch planned larger than the temporary folder now holds is re-planned in halves and completes", async () => {
    const files = 8;
    // A bound for a bigger function: the 8 files (21 MB) are one batch, which the 12 MB folder cannot hold.
    const pipeline = await ingestPipeline(await landBacklog(files), "64mb");
    const update = await cappedUpdate(pipeline.id);
    expect(update.state).toBe("COMPLETED");
    expect(await counts(pipeline.table)).toEqual({ rows: files * ROWS_PER_FILE, ids: files * ROWS_PER_FILE });
    const warned = (await events(pipeline.id, update.update_id, "level = 'WARN'")).map((e) => e.message);
    expect(warned[0]).toMatch(
      /^Flow 'ingest' re-planned batch 1 \(8 files, [\d.]+ MB\) as batch 2 \(4 files, [\d.]+ MB\): TEMP_SPACE_EXHAUSTED: flow "ingest" ran out of temporary space/,
    );
  });
});
