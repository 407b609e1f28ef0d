import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../support/control-plane.ts";
import { startTestKinesis, type TestKinesis } from "../../support/kinesis.ts";

/**
 * A Kinesis flow's lag (issue 39): each batch's flow_progress says how far its shards are behind
 * their newest record (GetRecords' MillisBehindLatest, as `metrics.backlog_seconds`), through the API
 * on the local runtime against a real Kinesis emulator: a batch that leaves records written seconds
 * later behind is that far behind, and the batch that catches up is not behind at all.
 */

const STREAM = "lagging";

describe("a kinesis flow's lag", () => {
  let cp: TestControlPlane;
  let kinesis: TestKinesis;

  beforeAll(async () => {
    [cp, kinesis] = await Promise.all([startTestControlPlane(), startTestKinesis()]);
    await kinesis.createStream(STREAM, 1);
  });
  afterAll(async () => {
    await cp?.close();
    await kinesis?.stop();
  });

  it("reports each batch's MillisBehindLatest as its backlog_seconds", async () => {
    const put = (ids: number[]) =>
      kinesis.put(
        STREAM,
        ids.map((id) => ({ partitionKey: "k", data: { id } })),
      );
    await put([1, 2, 3, 4]);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await put([5, 6, 7, 8]);
    const { pipeline_id } = await cp.client.createPipeline({
      name: "kinesis lag",
      catalog: "web",
      schema: "lag",
      definition: {
        datasets: [
          {
            type: "streaming_table",
            name: "lagging",
            flows: [
              {
                name: "ingest",
                source: {
                  type: "kinesis",
                  stream: STREAM,
                  region: kinesis.region,
                  endpoint: kinesis.endpoint,
                  starting_position: "TRIM_HORIZON",
                  data_format: "json",
                  schema: { id: "BIGINT" },
                },
                sql: "SELECT data.id AS id FROM source",
                options: { max_offsets_per_batch: 4 },
              },
            ],
          },
        ],
      },
    });
    const { update_id } = await cp.client.startUpdate(pipeline_id);
    const done = await cp.client.waitForUpdate(pipeline_id, update_id, { intervalMs: 200 });
    expect(done.state).toBe("COMPLETED");
    const { events } = await cp.client.events(pipeline_id, {
      filter: `event_type = 'flow_progress' AND origin.update_id = '${update_id}'`,
      order_by: "timestamp asc",
    });
    const batches = events
      .map(
        (e) =>
          (e.details as { flow_progress: { batch?: unknown; metrics?: Record<string, number> } })
            .flow_progress,
      )
      .filter((p) => p.batch !== undefined)
      .map((p) => [p.metrics?.["num_input_rows"], p.metrics?.["backlog_seconds"]]);
    expect(batches[0]?.[0]).toBe(4);
    expect(batches[0]?.[1]).toBeGreaterThanOrEqual(2.5);
    expect(batches[0]?.[1]).toBeLessThan(60);
    expect(batches.at(-1)?.[1]).toBe(0);
  });
});
