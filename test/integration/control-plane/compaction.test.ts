import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Compaction through the API: `raw → clean` plus a view. The pipeline's tables compact themselves
 * (auto-compaction, here at 3 small files); the stream reader downstream does not process the
 * compacted rows again; a rewind to a point before a compaction restores that point's files; and
 * `POST /tables/{name}/optimize` compacts on request, dry-runs, and refuses what it cannot do.
 */

describe("compaction", () => {
  let cp: TestControlPlane;
  let pipelineId: string;
  let landed = 0;

  const run = async (body?: unknown) => {
    const { update_id } = await cp.client.startUpdate(pipelineId, body);
    return cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 });
  };
  const ids = async (table: string) =>
    (await cp.client.query(`compact.s.${table}`, { sql: "SELECT id FROM t ORDER BY id" })).rows.map((r) =>
      Number(r["id"]),
    );
  const operations = async (table: string) =>
    (await cp.client.history(`compact.s.${table}`)).history.map((h) => String(h["operation"])).reverse();
  const landAndRun = async () => {
    landed += 1;
    await cp.land(`${landed}.json`, [{ id: landed }]);
    const update = await run();
    expect(update.state, update.error?.message).toBe("COMPLETED");
  };
  const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

  beforeAll(async () => {
    cp = await startTestControlPlane();
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "compaction",
      catalog: "compact",
      schema: "s",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            properties: { "ebb.autoCompact.minNumFiles": "3" },
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: cp.landing, format: "json", schema: { id: "BIGINT" } },
                sql: "SELECT id FROM source",
              },
            ],
          },
          {
            type: "streaming_table",
            name: "clean",
            flows: [
              { name: "copy", source: { type: "stream", dataset: "raw" }, sql: "SELECT id FROM source" },
            ],
          },
          { type: "materialized_view", name: "total", sql: "SELECT count(*) AS n, sum(id) AS s FROM raw" },
        ],
      },
    }));
  });
  afterAll(async () => {
    await cp?.client.deletePipeline(pipelineId, true).catch(() => undefined);
    await cp?.close();
  });

  it("auto-compacts a pipeline table; the stream reader downstream does not read the rows again", async () => {
    for (let i = 0; i < 4; i++) await landAndRun();
    expect(await operations("raw")).toEqual([
      "CREATE TABLE",
      "STREAMING UPDATE",
      "STREAMING UPDATE",
      "STREAMING UPDATE",
      "STREAMING UPDATE",
      "OPTIMIZE",
    ]);
    expect(await ids("raw")).toEqual(range(4));
    expect(await ids("clean")).toEqual(range(4));
    const [total] = (await cp.client.query("compact.s.total")).rows;
    expect(total).toEqual({ n: 4, s: 10 });
  });

  it("rewinds to a point before the compaction: that point's files come back, and the replay reads each row once", async () => {
    const points = (await cp.client.rewindPoints(pipelineId)).rewind_points;
    // Newest first: the point of update 2 (raw at version 2, before the OPTIMIZE at version 5, which
    // compacted the 3 files before update 4's own).
    const beforeCompaction = points.find((p) =>
      p.datasets.some((d) => d.identifier === "compact.s.raw" && d.table_version === 2),
    );
    expect(beforeCompaction).toBeDefined();
    const rewind = await run({ rewind_spec: { rewind_point_id: beforeCompaction!.rewind_point_id } });
    expect(rewind.state, rewind.error?.message).toBe("COMPLETED");
    expect(await ids("raw")).toEqual(range(2));
    expect(await ids("clean")).toEqual(range(2));
    const replay = await run();
    expect(replay.state, replay.error?.message).toBe("COMPLETED");
    expect(await ids("raw")).toEqual(range(4));
    expect(await ids("clean")).toEqual(range(4));
  });

  it("OPTIMIZE through the API: dry run, compaction, nothing left to do; the reader carries on", async () => {
    const before = await ids("clean");
    const dryRun = await cp.client.optimize("compact.s.clean", { dry_run: true });
    expect(dryRun).toMatchObject({ dry_run: true, metrics: { num_bins: 1 } });
    expect(dryRun["version"]).toBeUndefined();
    const done = await cp.client.optimize("compact.s.clean");
    expect(done).toMatchObject({ dry_run: false, metrics: { num_bins: 1, num_files_added: 1 } });
    expect((await operations("clean")).at(-1)).toBe("OPTIMIZE");
    expect(await ids("clean")).toEqual(before);
    expect(await cp.client.optimize("compact.s.clean")).toMatchObject({ metrics: { num_bins: 0 } });
    await landAndRun();
    expect(await ids("clean")).toEqual(range(5));
  });

  it("refuses unknown fields and tables that do not exist", async () => {
    await expect(cp.client.optimize("compact.s.clean", { zorder_by: ["id"] } as never)).rejects.toMatchObject(
      {
        status: 400,
        errorCode: "INVALID_PARAMETER_VALUE",
      },
    );
    await expect(cp.client.optimize("compact.s.nope")).rejects.toMatchObject({
      status: 404,
      errorCode: "RESOURCE_DOES_NOT_EXIST",
    });
  });
});
