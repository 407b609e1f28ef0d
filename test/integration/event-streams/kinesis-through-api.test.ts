import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isRunning } from "../../../infra/local/stand-in-process.ts";
import {
  runExplainedUpdate,
  startTestControlPlane,
  type TestControlPlane,
} from "../../support/control-plane.ts";
import { startTestKinesis, type TestKinesis } from "../../support/kinesis.ts";
import { listeningSockets } from "../../support/listening-sockets.ts";

/**
 * The `kinesis` source through the HTTP API on the local runtime, against a real Kinesis emulator
 * (kinesis-mock) through the AWS SDK: put, run, rewind to a point, replay with a fix (exactly once), a
 * split and a merge mid-stream (children read only after their parents are drained), and a rewind
 * to a point from before the reshard that replays parents and children again, exactly once.
 */

const STREAM = "clicks";

const definition = (kinesis: TestKinesis, sql: string) => ({
  datasets: [
    {
      type: "streaming_table",
      name: "clicks",
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
            schema: { id: "BIGINT", cents: "BIGINT" },
          },
          sql,
          options: { max_offsets_per_batch: 4 },
        },
      ],
    },
  ],
});

const COLUMNS =
  "partition_key, shard_id, sequence_number, approximate_arrival_timestamp AS arrived_at, stream";
const GOOD_SQL = `SELECT data.id AS id, CAST(data.cents / 100.0 AS DOUBLE) AS euros, ${COLUMNS} FROM source`;
/** The bad deploy: reports cents as euros. */
const BAD_SQL = `SELECT data.id AS id, CAST(data.cents AS DOUBLE) AS euros, ${COLUMNS} FROM source`;

describe("the kinesis source through the API", () => {
  let cp: TestControlPlane;
  let kinesis: TestKinesis;
  let pipelineId: string;
  let next = 1;

  const run = (body?: unknown) => runExplainedUpdate(cp.client, pipelineId, body);
  /** Puts `count` records with ids from `next` on, over eight partition keys (so over every shard). */
  const put = async (count: number) => {
    const records = Array.from({ length: count }, () => {
      const id = next++;
      return { partitionKey: `user-${id % 8}`, data: { id, cents: id * 100 } };
    });
    await kinesis.put(STREAM, records);
  };
  const sumOfIds = (n: number) => (n * (n + 1)) / 2;
  const table = async () =>
    (
      await cp.client.query("web.events.clicks", {
        sql: "SELECT count(*)::INTEGER AS n, count(DISTINCT id)::INTEGER AS ids, count(DISTINCT (shard_id, sequence_number))::INTEGER AS positions, sum(euros)::DOUBLE AS euros, max(id)::INTEGER AS max_id FROM t",
      })
    ).rows[0];
  const shardsRead = async () =>
    (
      await cp.client.query("web.events.clicks", { sql: "SELECT DISTINCT shard_id FROM t ORDER BY 1" })
    ).rows.map((r) => r["shard_id"]);

  const latestVersion = async () =>
    Math.max(...(await cp.client.history("web.events.clicks")).history.map((h) => Number(h["version"])));
  /** The batch (table version) that wrote each row of the shards given, from version `after` on. */
  const batchesOf = async (after: number, shardIds: readonly string[]) => {
    const written = new Map<string, number>();
    for (let version = after + 1; version <= (await latestVersion()); version++) {
      const { rows } = await cp.client.query("web.events.clicks", {
        version,
        sql: `SELECT id, shard_id FROM t WHERE shard_id IN (${shardIds.map((id) => `'${id}'`).join(", ")})`,
      });
      for (const row of rows) {
        const key = String(row["id"]);
        if (!written.has(key)) written.set(key, version);
      }
    }
    return [...written.values()];
  };
  /** A child's first record is written by a later batch than every record of its parents. */
  const expectChildrenAfterParents = async (after: number, parents: string[], children: string[]) => {
    const parentBatches = await batchesOf(after, parents);
    const childBatches = await batchesOf(after, children);
    expect(parentBatches.length).toBeGreaterThan(0);
    expect(childBatches.length).toBeGreaterThan(0);
    expect(Math.min(...childBatches)).toBeGreaterThan(Math.max(...parentBatches));
  };

  beforeAll(async () => {
    [cp, kinesis] = await Promise.all([startTestControlPlane(), startTestKinesis()]);
    await kinesis.createStream(STREAM, 2);
    ({ pipeline_id: pipelineId } = await cp.client.createPipeline({
      name: "kinesis clicks",
      catalog: "web",
      schema: "events",
      configuration: { "pipelines.rewind.enabled": "true" },
      definition: definition(kinesis, GOOD_SQL),
    }));
  });
  afterAll(async () => {
    await cp?.close();
    await kinesis?.stop();
    // Stopped means gone: no process of the emulator outlives its owner.
    for (const pid of kinesis?.mock.pids ?? []) expect(isRunning(pid)).toBe(false);
  });

  it("runs the emulator on loopback only", () => {
    const sockets = listeningSockets(kinesis.mock.pids);
    expect(sockets.length).toBeGreaterThan(0);
    for (const socket of sockets) expect(socket.address).toBe("127.0.0.1");
  });

  let goodPoint: string;

  it("reads every record once, in batches of max_offsets_per_batch, with the record's columns", async () => {
    const before = Date.now();
    await put(10);
    const update = await run();
    expect(update).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toEqual({ n: 10, ids: 10, positions: 10, euros: sumOfIds(10), max_id: 10 });
    const { events } = await cp.client.events(pipelineId, {
      filter: `event_type = 'flow_progress' AND origin.update_id = '${update.update_id}'`,
    });
    expect(events.length).toBeGreaterThanOrEqual(3); // 10 records, at most 4 a batch
    const [row] = (
      await cp.client.query("web.events.clicks", {
        sql: "SELECT partition_key, stream, shard_id, sequence_number, arrived_at FROM t WHERE id = 3",
      })
    ).rows;
    expect(row).toMatchObject({ partition_key: "user-3", stream: STREAM });
    expect(String(row!["shard_id"])).toMatch(/^shardId-\d{12}$/);
    expect(String(row!["sequence_number"])).toMatch(/^\d{20,}$/);
    expect(new Date(String(row!["arrived_at"])).getTime()).toBeGreaterThanOrEqual(before - 5_000);
    expect(await shardsRead()).toEqual(["shardId-000000000000", "shardId-000000000001"]);
    goodPoint = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    // Nothing new: the next update reads nothing and writes nothing.
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toMatchObject({ n: 10 });
  });

  it("rewinds to a point, then replays the records after it with the fixed definition, exactly once", async () => {
    await cp.client.editPipeline(pipelineId, { definition: definition(kinesis, BAD_SQL) });
    await put(4);
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toMatchObject({ n: 14, euros: sumOfIds(10) + (11 + 12 + 13 + 14) * 100 });

    const rewind = await run({ rewind_spec: { rewind_point_id: goodPoint } });
    expect(rewind.state).toBe("COMPLETED");
    expect(await table()).toEqual({ n: 10, ids: 10, positions: 10, euros: sumOfIds(10), max_id: 10 });

    await cp.client.editPipeline(pipelineId, { definition: definition(kinesis, GOOD_SQL) });
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toEqual({ n: 14, ids: 14, positions: 14, euros: sumOfIds(14), max_id: 14 });
  });

  it("refuses reset_checkpoints: false for a dataset read from Kinesis", async () => {
    const refused = await cp.client
      .startUpdate(pipelineId, {
        rewind_spec: {
          rewind_point_id: goodPoint,
          datasets: [{ identifier: "web.events.clicks", cascade: true, reset_checkpoints: false }],
        },
      })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ errorCode: "INVALID_REWIND_SPECIFICATION.RESET_CHECKPOINTS_REQUIRED" });
  });

  let beforeReshard: string;

  it("reads a split shard's children after the parent, without loss or duplicates", async () => {
    beforeReshard = (await cp.client.rewindPoints(pipelineId)).rewind_points[0]!.rewind_point_id;
    await put(6); // 15–20, into both shards
    await kinesis.split(STREAM, "shardId-000000000000");
    await put(8); // 21–28: shard 0's keys now go to its children 2 and 3
    const version = await latestVersion();
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    await expectChildrenAfterParents(
      version,
      ["shardId-000000000000"],
      ["shardId-000000000002", "shardId-000000000003"],
    );
    expect(await table()).toEqual({ n: 28, ids: 28, positions: 28, euros: sumOfIds(28), max_id: 28 });
    expect(await shardsRead()).toEqual([
      "shardId-000000000000",
      "shardId-000000000001",
      "shardId-000000000002",
      "shardId-000000000003",
    ]);
  });

  it("reads a merged shard after both its parents, without loss or duplicates", async () => {
    await put(4); // 29–32
    await kinesis.merge(STREAM, "shardId-000000000002", "shardId-000000000003");
    await put(8); // 33–40: the children's keys now go to shard 4
    const version = await latestVersion();
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    await expectChildrenAfterParents(
      version,
      ["shardId-000000000002", "shardId-000000000003"],
      ["shardId-000000000004"],
    );
    expect(await table()).toEqual({ n: 40, ids: 40, positions: 40, euros: sumOfIds(40), max_id: 40 });
    expect(await shardsRead()).toContain("shardId-000000000004");
  });

  it("rewinds to a point from before the reshard, restoring its shard positions, and replays parents then children exactly once", async () => {
    const rewind = await run({ rewind_spec: { rewind_point_id: beforeReshard } });
    expect(rewind.state).toBe("COMPLETED");
    expect(await table()).toEqual({ n: 14, ids: 14, positions: 14, euros: sumOfIds(14), max_id: 14 });
    expect(await shardsRead()).toEqual(["shardId-000000000000", "shardId-000000000001"]);
    expect(await run()).toMatchObject({ state: "COMPLETED" });
    expect(await table()).toEqual({ n: 40, ids: 40, positions: 40, euros: sumOfIds(40), max_id: 40 });
  });
});
