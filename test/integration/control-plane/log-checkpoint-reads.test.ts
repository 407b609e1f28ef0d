import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * A table past its log checkpoints (one every 10 commits) through every read path of the API: the
 * query (latest, by version and by timestamp, across two checkpoints), history, changes, datasets and
 * onset. 26 files, one per batch: versions 0 (create) … 26, checkpoints at 10 and 20.
 */

const FILES = 26;

describe("tables with log checkpoints, read through the API", () => {
  let cp: TestControlPlane;
  let pipelineId: string;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "checkpointed",
      catalog: "ckpt",
      schema: "reads",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "events",
            // One version per batch, so each version holds as many rows as its number.
            properties: { "delta.autoOptimize.autoCompact": "false" },
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT id FROM source",
                options: { max_files_per_batch: 1 },
              },
            ],
          },
        ],
      },
    }));
    for (let i = 1; i <= FILES; i++) await cp.land(`f${String(i).padStart(3, "0")}.json`, [{ id: i }]);
    const { update_id } = await cp.client.startUpdate(pipelineId);
    const update = await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
    expect(update.state).toBe("COMPLETED");
  });
  afterAll(() => cp?.close());

  const count = async (body: { version?: number; timestamp?: string } = {}) => {
    const answer = await cp.client.query("ckpt.reads.events", {
      ...body,
      sql: "SELECT count(*) AS n FROM t",
    });
    return { version: answer.version, n: Number(answer.rows[0]!["n"]) };
  };

  it("queries the latest version and every version across both checkpoints", async () => {
    expect(await count()).toEqual({ version: FILES, n: FILES });
    for (const version of [5, 9, 10, 11, 19, 20, 21, FILES]) {
      expect(await count({ version })).toEqual({ version, n: version });
    }
  });

  it("travels by timestamp to versions past each checkpoint", async () => {
    const { history } = await cp.client.history("ckpt.reads.events");
    for (const version of [12, 23]) {
      const entry = history.find((h) => h.version === version)!;
      expect(await count({ timestamp: entry.timestamp as string })).toEqual({ version, n: version });
    }
  });

  it("lists history, changes, datasets and the onset of a checkpointed table", async () => {
    const { history } = await cp.client.history("ckpt.reads.events");
    expect(history).toHaveLength(FILES + 1);
    const changes = await cp.client.changes("ckpt.reads.events", {
      starting_version: 18,
      ending_version: 22,
    });
    expect(changes.changes.map((c) => Number(c["id"])).sort((a, b) => a - b)).toEqual([18, 19, 20, 21, 22]);
    const { datasets } = await cp.client.datasets(pipelineId);
    expect(datasets[0]).toMatchObject({ name: "events", version: FILES, row_count: FILES });
    const onset = await cp.client.onset("ckpt.reads.events", { predicate: "id = 24" });
    expect(onset).toMatchObject({ found: true, first_bad_version: 24, last_good_version: 23 });
  });
});
