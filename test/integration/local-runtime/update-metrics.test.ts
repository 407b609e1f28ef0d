import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";

/**
 * Metrics (issue 39): a real update on the local runtime (the API, the state machine's steps, real
 * files) writes CloudWatch embedded-metric-format lines, to the log file as Lambda writes them to
 * CloudWatch Logs: per flow its batches, records in and out, rows dropped by an expectation, bytes
 * written and the files its source still held; per update its end and duration; per request its count, latency and error code.
 */
describe("the metrics of an update", () => {
  let cp: TestControlPlane;
  let folder: string;
  let logFile: string;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), "ebb-metrics-"));
    logFile = path.join(folder, "logs", "ebb.log");
    cp = await startTestControlPlane({ log: { file: logFile } });
  });
  afterAll(async () => {
    await cp?.close();
    await rm(folder, { recursive: true, force: true });
  });

  type Emf = Record<string, unknown> & {
    _aws: {
      CloudWatchMetrics: {
        Namespace: string;
        Dimensions: string[][];
        Metrics: { Name: string; Unit: string }[];
      }[];
    };
  };
  const emfLines = async () =>
    (await readFile(logFile, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line): line is Emf => "_aws" in line);
  const units = (line: Emf) =>
    Object.fromEntries(line._aws.CloudWatchMetrics.flatMap((m) => m.Metrics.map((x) => [x.Name, x.Unit])));

  it("counts each batch's records, drops, bytes and backlog, the update's end, and the requests", async () => {
    const schema = `metrics_${Date.now().toString(36)}`;
    const source = path.join(cp.landing, schema);
    await mkdir(source);
    const rows = [{ id: 1 }, { id: 2 }, { id: 300 }];
    await writeFile(path.join(source, "a.json"), rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
    await writeFile(path.join(source, "b.json"), `{"id": 4}\n`);
    // b.json waits behind a.json's batch: an hour old, it is the source's lag then.
    const anHourAgo = new Date(Date.now() - 3_600_000);
    await utimes(path.join(source, "b.json"), anHourAgo, anHourAgo);
    const { pipeline_id } = await cp.client.createPipeline({
      name: `metrics ${schema}`,
      catalog: "main",
      schema,
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "raw",
            expectations: [{ name: "small_id", condition: "id < 100", on_violation: "DROP" }],
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
    const { update_id } = await cp.client.startUpdate(pipeline_id);
    const done = await cp.client.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 });
    expect(done.state).toBe("COMPLETED");
    const refused = await fetch(`${cp.plane.endpoint}/api/2.0/pipelines/${pipeline_id}/updates/nope`, {
      headers: { authorization: `Bearer ${cp.plane.token}` },
    });
    expect(refused.status).toBe(400);
    const refusal = (await refused.json()) as { error_code: string; request_id: string };

    const lines = await emfLines();
    for (const line of lines) {
      expect(line._aws.CloudWatchMetrics[0]?.Namespace).toBe("Ebb");
      expect(line["service"]).toBe("ebb");
    }
    const batches = lines.filter((line) => line["update_id"] === update_id && "Batches" in line);
    expect(batches.map((line) => line["BacklogFiles"])).toEqual([1, 0]);
    expect(batches[1]).toMatchObject({ RecordsIn: 1, RecordsOut: 1, BacklogBytes: 0, BacklogSeconds: 0 });
    // The age of the oldest file left behind, in seconds.
    expect(batches[0]?.["BacklogSeconds"]).toBeGreaterThanOrEqual(3_600);
    expect(batches[0]?.["BacklogSeconds"]).toBeLessThan(3_600 + 300);
    expect(units(batches[0]!)).toMatchObject({ BacklogSeconds: "Seconds" });
    const batch = batches[0];
    expect(batch).toMatchObject({
      pipeline_id,
      flow: "ingest",
      Batches: 1,
      RecordsIn: 3,
      RecordsOut: 2,
      RowsDroppedByExpectations: 1,
      RecordsQuarantined: 0,
      BytesWritten: expect.any(Number),
      BatchDuration: expect.any(Number),
      BacklogBytes: 10,
    });
    expect(batch?.["BytesWritten"]).toBeGreaterThan(0);
    expect(batch?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([
      ["service"],
      ["service", "pipeline_id"],
      ["service", "pipeline_id", "flow"],
    ]);
    expect(units(batch!)).toMatchObject({
      Batches: "Count",
      BytesWritten: "Bytes",
      BatchDuration: "Milliseconds",
    });

    const ended = lines.find((line) => line["update_id"] === update_id && "UpdatesCompleted" in line);
    expect(ended).toMatchObject({ pipeline_id, UpdatesCompleted: 1, UpdateDuration: expect.any(Number) });
    expect(ended?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([["service"], ["service", "pipeline_id"]]);
    expect(ended?.["UpdateDuration"]).toBeGreaterThan(0);
    expect(units(ended!)).toMatchObject({ UpdatesCompleted: "Count", UpdateDuration: "Milliseconds" });

    expect(lines.filter((line) => line["request_id"] === refusal.request_id)).toEqual([
      expect.objectContaining({
        route: "GET /api/2.0/pipelines/{pipeline_id}/updates/{update_id}",
        Requests: 1,
        RequestLatency: expect.any(Number),
      }),
      expect.objectContaining({ error_code: refusal.error_code, Requests4xx: 1 }),
    ]);
  });
});
