import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Replayed records (issue 39): the demo's incident through the API on the local runtime — good data,
 * a point, bad data, a rewind to the point, new data, the replay — reports, per batch of the replay,
 * how many records it read again (flow_progress `metrics.replayed_records`, and the `ReplayedRecords`
 * metric), exactly: the two bad files' records, over two batches (the second knows the frontier from
 * the first's checkpoint), and none of the file that arrived after the rewind.
 */
interface FlowProgress {
  readonly batch?: unknown;
  readonly metrics?: Record<string, number>;
}

describe("records replayed after a rewind", () => {
  let cp: TestControlPlane;
  let folder: string;
  let logFile: string;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), "ebb-replayed-"));
    logFile = path.join(folder, "logs", "ebb.log");
    cp = await startTestControlPlane({ log: { file: logFile } });
  });
  afterAll(async () => {
    await cp?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("counts the records a replay reads again, batch by batch, and no others", async () => {
    const schema = `replayed_${Date.now().toString(36)}`;
    const source = path.join(cp.landing, schema);
    await mkdir(source);
    const land = (name: string, ids: number[]) =>
      writeFile(path.join(source, name), ids.map((id) => JSON.stringify({ id })).join("\n") + "\n");
    const { pipeline_id } = await cp.client.createPipeline({
      name: `replayed ${schema}`,
      catalog: "main",
      schema,
      configuration: { "pipelines.rewind.betaEnabled": "true" },
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            flows: [
              {
                name: "ingest",
                source: { type: "auto_loader", path: source, format: "json", schema: { id: "BIGINT" } },
                options: { max_files_per_batch: 1 },
                sql: "SELECT * FROM source",
              },
            ],
          },
        ],
      },
    });
    const run = async (body?: unknown) => {
      const { update_id } = await cp.client.startUpdate(pipeline_id, body);
      const done = await cp.client.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 });
      expect(done.state).toBe("COMPLETED");
      return update_id;
    };
    const progress = async (updateId: string) =>
      (
        await cp.client.events(pipeline_id, {
          filter: `event_type = 'flow_progress' AND origin.update_id = '${updateId}'`,
          order_by: "timestamp asc",
          max_results: 100,
        })
      ).events
        .map((e) => (e.details as { flow_progress: FlowProgress }).flow_progress)
        // The committed batches (a flow's COMPLETED status carries its totals).
        .flatMap((p) => (p.batch !== undefined && p.metrics ? [p.metrics] : []));

    await land("a.json", [1, 2, 3]);
    const first = await run();
    expect((await progress(first)).map((m) => m["replayed_records"])).toEqual([undefined]);
    const point = (await cp.client.rewindPoints(pipeline_id)).rewind_points[0]!.rewind_point_id;
    await land("b.json", [-1, -2]);
    await land("c.json", [-3, -4, -5, -6]);
    await run();

    await run({
      cause: "USER_ACTION",
      rewind_spec: {
        rewind_point_id: point,
        datasets: [{ identifier: `main.${schema}.raw`, cascade: true, reset_checkpoints: true }],
        dry_run: false,
      },
    });
    await land("d.json", [7, 8, 9, 10, 11]);
    const replay = await run();

    const batches = await progress(replay);
    expect(batches.map((m) => [m["num_input_rows"], m["replayed_records"]])).toEqual([
      [2, 2],
      [4, 4],
      [5, undefined],
    ]);
    const emf = (await readFile(logFile, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => "_aws" in line && line["update_id"] === replay && "Batches" in line);
    expect(emf.map((line) => line["ReplayedRecords"])).toEqual([2, 4, undefined]);
    expect(emf[0]).toMatchObject({ pipeline_id, flow: "ingest", ReplayedRecords: 2 });

    // Once past the frontier, nothing more is counted.
    await land("e.json", [12]);
    expect((await progress(await run())).map((m) => m["replayed_records"])).toEqual([undefined]);
  });
});
