import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EbbApiError } from "../../../shared/client/ebb-client.ts";
import {
  explainedUpdate,
  runExplainedUpdate,
  startTestControlPlane,
  type TestControlPlane,
} from "../../support/control-plane.ts";
import { startTestKafka, type TestKafka } from "../../support/kafka.ts";

/**
 * The `kafka` source through the HTTP API on the local runtime, against a real Apache Kafka broker:
 * produce, run, rewind to a point, replay with a fix (exactly once), a partition added mid-stream,
 * a broker restart while an update runs, and a rewind past the topic's retention (by age, and by size)
 * refused up front.
 */

const TOPIC = "orders";

const definition = (bootstrap: string, sql: string, topic = TOPIC) => ({
  datasets: [
    {
      type: "streaming_table",
      name: topic,
      flows: [
        {
          name: "ingest",
          source: {
            type: "kafka",
            bootstrap_servers: bootstrap,
            topic,
            starting_offsets: "earliest",
            value_format: "json",
            schema: { id: "BIGINT", cents: "BIGINT" },
          },
          sql,
          options: { max_offsets_per_batch: 4 },
        },
      ],
    },
  ],
});

const GOOD_SQL =
  'SELECT value.id AS id, CAST(value.cents / 100.0 AS DOUBLE) AS euros, key, partition, "offset", headers[1].value AS origin FROM source';
/** The bad deploy: reports cents as euros. */
const BAD_SQL =
  'SELECT value.id AS id, CAST(value.cents AS DOUBLE) AS euros, key, partition, "offset", headers[1].value AS origin FROM source';

describe("the kafka source through the API", () => {
  let cp: TestControlPlane;
  let kafka: TestKafka;
  let pipelineId: string;
  let next = 1;

  const run = (body?: unknown) => runExplainedUpdate(cp.client, pipelineId, body);
  const produce = async (count: number, partition?: number) => {
    const records = Array.from({ length: count }, () => {
      const id = next++;
      return {
        key: `k${id}`,
        value: { id, cents: id * 100 },
        partition: partition ?? id % 2,
        headers: { origin: "test" },
      };
    });
    await kafka.produce(TOPIC, records);
  };
  const table = async () =>
    (
      await cp.client.query("shop.sales.orders", {
        sql: 'SELECT count(*)::INTEGER AS n, count(DISTINCT id)::INTEGER AS ids, count(DISTINCT (partition, "offset"))::INTEGER AS positions, sum(euros)::DOUBLE AS euros, max(id)::INTEGER AS max_id FROM t',
      })
    ).rows[0];

  beforeAll(async () => {
    [cp, kafka] = await Promise.all([startTestControlPlane(), startTestKafka()]);
    await kafka.createTopic(TOPIC, 2);
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "kafka orders",
      catalog: "shop",
      schema: "sales",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition(kafka.broker.bootstrap, GOOD_SQL),
    }));
  });
  afterAll(async () => {
    await cp?.close();
    await kafka?.stop();
  });

  let goodPoint: string;

  it("reads every record once, in batches of max_offsets_per_batch, with the record's columns", async () => {
    await produce(10);
    const update = await run();
    expect(update).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toEqual({ n: 10, ids: 10, positions: 10, euros: 55, max_id: 10 });
    const { events } = await cp.client.events(pipelineId, {
      filter: `event_type = 'flow_progress' AND origin.update_id = '${update.update_id}'`,
    });
    expect(events.length).toBeGreaterThanOrEqual(3); // 10 records, at most 4 a batch
    const [row] = (
      await cp.client.query("shop.sales.orders", { sql: "SELECT key, origin FROM t WHERE id = 3" })
    ).rows;
    expect(row).toEqual({ key: "k3", origin: "test" });
    goodPoint = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    // Nothing new: the next update reads nothing and writes nothing.
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toMatchObject({ n: 10 });
  });

  it("rewinds to a point, then replays the records after it with the fixed definition, exactly once", async () => {
    await cp.client.editPipeline(pipelineId, { definition: definition(kafka.broker.bootstrap, BAD_SQL) });
    await produce(4);
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toMatchObject({ n: 14, euros: 55 + (11 + 12 + 13 + 14) * 100 });

    const rewind = await run({ rewind_spec: { rewind_point_id: goodPoint } });
    expect(rewind.state).toBe("COMPLETED");
    expect(await table()).toEqual({ n: 10, ids: 10, positions: 10, euros: 55, max_id: 10 });

    await cp.client.editPipeline(pipelineId, { definition: definition(kafka.broker.bootstrap, GOOD_SQL) });
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toEqual({ n: 14, ids: 14, positions: 14, euros: 105, max_id: 14 });
  });

  it("refuses reset_checkpoints: false for a dataset read from Kafka", async () => {
    const refused = await cp.client
      .startUpdate(pipelineId, {
        rewind_spec: {
          rewind_point_id: goodPoint,
          datasets: [{ identifier: "shop.sales.orders", cascade: true, reset_checkpoints: false }],
        },
      })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ errorCode: "INVALID_REWIND_SPECIFICATION.RESET_CHECKPOINTS_REQUIRED" });
  });

  it("picks up a partition added to the topic", async () => {
    await kafka.addPartitions(TOPIC, 3);
    await produce(3, 2);
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toMatchObject({ n: 17, ids: 17, positions: 17, max_id: 17 });
    const partitions = (
      await cp.client.query("shop.sales.orders", { sql: "SELECT DISTINCT partition FROM t ORDER BY 1" })
    ).rows.map((r) => r["partition"]);
    expect(partitions).toEqual([0, 1, 2]);
  });

  it("converges after a broker restart in the middle of an update's batches", async () => {
    await produce(20); // five batches of four
    const { update_id } = await cp.client.startUpdate(pipelineId, {});
    // Once the first batch has committed, the broker goes away with the other four still to read.
    const progress = `event_type = 'flow_progress' AND origin.update_id = '${update_id}'`;
    const deadline = Date.now() + 240_000;
    while ((await cp.client.events(pipelineId, { filter: progress })).events.length === 0) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await cp.client.getUpdate(pipelineId, update_id)).update.state).toBe("RUNNING");
    await kafka.restart();
    // The read that meets the stopped broker fails as unavailable, and the task's Retry runs the flow
    // again from its checkpoint: the same update completes, the interrupted batch read once.
    const update = await explainedUpdate(
      cp.client,
      pipelineId,
      await cp.client.waitForUpdate(pipelineId, update_id, { intervalMs: 200 }),
    );
    expect(update.state).toBe("COMPLETED");
    expect(await table()).toMatchObject({ n: 37, ids: 37, positions: 37, max_id: 37 });
    // The attempts that met the stopped broker were retried: warnings that say so, no error.
    const logged = async (level: string) =>
      (
        await cp.client.events(pipelineId, {
          filter: `level = '${level}' AND origin.update_id = '${update_id}'`,
        })
      ).events;
    expect(await logged("ERROR")).toEqual([]);
    const retried = (await logged("WARN")).filter((e) => e.event_type === "flow_progress");
    expect(retried.length).toBeGreaterThan(0);
    for (const event of retried) {
      expect(event.message).toMatch(/^Flow 'ingest' failed on a transient error and will be retried/);
      expect(event).toMatchObject({ error: { fatal: false } });
    }
  });

  it("fails an update whose Kafka stays unreachable past the retries with SOURCE_UNAVAILABLE, not INTERNAL_ERROR", async () => {
    // A port nothing listens on: every attempt fails to connect, for longer than the task retries.
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const { pipeline_id: id } = await cp.client.createPipeline({
      name: "kafka gone",
      catalog: "shop",
      schema: "gone",
      definition: definition(`127.0.0.1:${closed}`, "SELECT value.id AS id FROM source"),
    });
    const { update_id } = await cp.client.startUpdate(id);
    const update = await cp.client.waitForUpdate(id, update_id, { intervalMs: 500, timeoutMs: 240_000 });
    expect(update.state).toBe("FAILED");
    expect(update.error?.error_code).toBe("SOURCE_UNAVAILABLE");
    expect(update.error?.message).toContain(`Kafka at 127.0.0.1:${closed} could not serve the read`);
  });

  it("refuses, before anything changes, a rewind to a point whose offsets the topic no longer holds", async () => {
    // A short retention, and small segments so the old ones can go: once a record rolls the segment,
    // the broker deletes the point's records from partition 0.
    await kafka.configure(TOPIC, { "retention.ms": "2000", "segment.ms": "200" });
    const deadline = Date.now() + 120_000;
    while ((await kafka.earliest(TOPIC, 0)) <= 5) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await kafka.produce(TOPIC, [{ value: "{}", partition: 0 }]);
    }
    const before = (await cp.client.listUpdates(pipelineId)).updates.length;
    const refused = await cp.client
      .startUpdate(pipelineId, { rewind_spec: { rewind_point_id: goodPoint } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(EbbApiError);
    expect(refused).toMatchObject({
      status: 400,
      errorCode: "INVALID_REWIND_SPECIFICATION.BEYOND_RETENTION",
    });
    expect((refused as Error).message).toMatch(/topic orders partition 0 now starts at offset \d+/);
    expect((refused as Error).message).toMatch(/retention settings: data for 2 seconds, retention\.ms=2000/);
    expect((await cp.client.listUpdates(pipelineId)).updates.length).toBe(before);
    expect(await table()).toMatchObject({ n: 37 });
  });

  it("refuses a rewind to a point whose offsets the broker deleted to keep the topic under retention.bytes", async () => {
    // Size alone: no age limit, and the smallest segments the broker allows (1 MiB), so two records
    // of 600 kB roll the point's segment and push the partition past its 1 MiB.
    const topic = "returns";
    await kafka.createTopic(topic, 1, {
      "retention.ms": "-1",
      "retention.bytes": String(1 << 20),
      "segment.bytes": String(1 << 20),
    });
    const { pipeline_id: id } = await cp.client.createPipeline({
      name: "kafka returns",
      catalog: "shop",
      schema: "returns",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition(kafka.broker.bootstrap, "SELECT value.id AS id FROM source", topic),
    });
    await kafka.produce(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ value: { id: i, cents: 0 }, partition: 0 })),
    );
    const { update_id } = await cp.client.startUpdate(id);
    expect(await cp.client.waitForUpdate(id, update_id, { intervalMs: 200 })).toMatchObject({
      state: "COMPLETED",
    });
    const point = (await cp.client.rewindPoints(id)).rewind_points[0]!.rewind_point_id;
    const padding = "x".repeat(600_000);
    const deadline = Date.now() + 120_000;
    while ((await kafka.earliest(topic, 0)) <= 5) {
      expect(Date.now()).toBeLessThan(deadline);
      await kafka.produce(topic, [{ value: { id: -1, cents: 0, padding }, partition: 0 }]);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const before = (await cp.client.listUpdates(id)).updates.length;
    const refused = await cp.client
      .startUpdate(id, { rewind_spec: { rewind_point_id: point } })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 400,
      errorCode: "INVALID_REWIND_SPECIFICATION.BEYOND_RETENTION",
    });
    const message = (refused as Error).message;
    expect(message).toMatch(/topic returns partition 0 now starts at offset \d+/);
    expect(message).toMatch(/retention settings: at most 1 MiB a partition, retention\.bytes=1048576/);
    expect(message).not.toMatch(/retention\.ms/);
    expect((await cp.client.listUpdates(id)).updates.length).toBe(before);
  });
  it("refuses a rewind to a point whose records were deleted, naming the offset the topic now starts at without blaming its retention", async () => {
    // The topic keeps data a week (the broker's default): only DeleteRecords removes the point's records.
    const topic = "refunds";
    await kafka.createTopic(topic, 1);
    const { pipeline_id: id } = await cp.client.createPipeline({
      name: "kafka refunds",
      catalog: "shop",
      schema: "refunds",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition(kafka.broker.bootstrap, "SELECT value.id AS id FROM source", topic),
    });
    await kafka.produce(
      topic,
      Array.from({ length: 3 }, (_, i) => ({ value: { id: i, cents: 0 }, partition: 0 })),
    );
    const { update_id } = await cp.client.startUpdate(id);
    expect(await cp.client.waitForUpdate(id, update_id, { intervalMs: 200 })).toMatchObject({
      state: "COMPLETED",
    });
    const point = (await cp.client.rewindPoints(id)).rewind_points[0]!.rewind_point_id;
    await kafka.produce(
      topic,
      Array.from({ length: 4 }, (_, i) => ({ value: { id: 10 + i, cents: 0 }, partition: 0 })),
    );
    await kafka.deleteRecords(topic, 0, 5);
    const refused = await cp.client
      .startUpdate(id, { rewind_spec: { rewind_point_id: point } })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 400,
      errorCode: "INVALID_REWIND_SPECIFICATION.BEYOND_RETENTION",
    });
    const message = (refused as Error).message;
    expect(message).toContain(
      "topic refunds partition 0 now starts at offset 5, but a replay from the target reads from offset 3: the records before offset 5 were deleted or expired",
    );
    expect(message).not.toMatch(/keeps data for/);
  });
});
