import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestKinesis, type TestKinesis } from "../../support/kinesis.ts";
import { EngineHarness } from "../engine/engine-harness.ts";

/**
 * A rewind to a point a Kinesis stream no longer holds is refused when the update is started, before
 * anything changes. The emulator keeps its records, and a stream keeps at least a day, so the control
 * plane's clock is what moves: the same rewind is accepted at the real time and refused a day later.
 */

const STREAM = "views";
const DAY_MS = 24 * 3_600_000;

describe("a rewind past a Kinesis stream's retention", () => {
  let kinesis: TestKinesis;
  let skew = 0;
  const h = new EngineHarness({ clock: () => Date.now() + skew });

  beforeAll(async () => {
    // The functions' credentials, as Lambda's environment gives them (the emulator checks none).
    vi.stubEnv("AWS_ACCESS_KEY_ID", "ebb-test");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "ebb-test");
    kinesis = await startTestKinesis();
    await kinesis.createStream(STREAM, 2);
  });
  afterAll(async () => {
    await h.close();
    await kinesis?.stop();
    vi.unstubAllEnvs();
  });

  const put = (from: number, count: number) =>
    kinesis.put(
      STREAM,
      Array.from({ length: count }, (_, i) => ({ partitionKey: `page-${from + i}`, data: { id: from + i } })),
    );

  it("is refused with BEYOND_RETENTION naming the stream, its shards and how long it keeps data", async () => {
    const pipeline = await h.validate({
      name: "kinesis retention",
      catalog: "web",
      schema: "kinesis_retention",
      configuration: { "pipelines.rewind.enabled": "true" },
      datasets: [
        {
          type: "streaming_table",
          name: "views",
          flows: [
            {
              name: "ingest",
              source: {
                type: "kinesis",
                stream: STREAM,
                region: kinesis.region,
                endpoint: kinesis.endpoint,
                data_format: "json",
                schema: { id: "BIGINT" },
              },
              sql: "SELECT data.id AS id, shard_id FROM source",
            },
          ],
        },
      ],
    });
    await put(1, 6);
    const first = await h.run(pipeline);
    expect(first.error).toBeUndefined();
    expect(first.state).toBe("COMPLETED");
    const point = new Date(Date.now()).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await put(7, 3);
    expect((await h.run(pipeline)).state).toBe("COMPLETED");
    expect(await h.rows(pipeline, "views")).toHaveLength(9);

    // Within the day the stream keeps, the point is good: a dry run plans the rewind.
    const dryRun = await h.start(pipeline, { rewind_spec: { rewind_timestamp: point, dry_run: true } });
    expect((await h.settled(dryRun)).state).toBe("COMPLETED");

    skew = DAY_MS + 3_600_000;
    const updates = (await h.plane.updates.list(h.pipelineId, { limit: 100 })).items.length;
    const refused = await h
      .start(pipeline, { rewind_spec: { rewind_timestamp: point } })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ errorCode: "INVALID_REWIND_SPECIFICATION.BEYOND_RETENTION" });
    const message = (refused as Error).message;
    expect(message).toMatch(/stream views shards shardId-000000000000, shardId-000000000001/);
    expect(message).toMatch(/keeps data for 1 day/);
    // Nothing changed: no update recorded, the table as it was.
    expect((await h.plane.updates.list(h.pipelineId, { limit: 100 })).items.length).toBe(updates);
    expect(await h.rows(pipeline, "views")).toHaveLength(9);
  });
});
