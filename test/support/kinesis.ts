import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  ListShardsCommand,
  MergeShardsCommand,
  PutRecordsCommand,
  SplitShardCommand,
  type Shard,
} from "@aws-sdk/client-kinesis";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { startKinesisMock } from "../../infra/local/kinesis-mock.ts";
import type { RunningStandIn } from "../../infra/local/stand-in-process.ts";

/**
 * A real Kinesis emulator for the tests that read Kinesis (started in their `beforeAll`, stopped in
 * `afterAll`; it exits with the test process), with the producer and resharding calls they make.
 */
export interface TestKinesis {
  readonly mock: RunningStandIn;
  readonly endpoint: string;
  readonly region: string;
  createStream(stream: string, shards: number): Promise<void>;
  /** Puts JSON data (strings pass as they are), in order, each under its partition key. */
  put(stream: string, records: readonly { partitionKey: string; data: unknown }[]): Promise<void>;
  /** Every shard the stream lists, open and closed. */
  shards(stream: string): Promise<Shard[]>;
  /** Splits an open shard at the middle of its hash-key range; waits until the stream is ACTIVE again. */
  split(stream: string, shardId: string): Promise<void>;
  /** Merges two adjacent open shards; waits until the stream is ACTIVE again. */
  merge(stream: string, shardId: string, adjacentShardId: string): Promise<void>;
  stop(): Promise<void>;
}

const REGION = "us-east-1";

export async function startTestKinesis(): Promise<TestKinesis> {
  const mock = await startKinesisMock();
  const client = new KinesisClient({
    endpoint: mock.endpoint,
    region: REGION,
    // The emulator checks no signature; these keys reach nothing else.
    credentials: { accessKeyId: "ebb-test", secretAccessKey: "ebb-test" },
    requestHandler: new NodeHttpHandler(),
  });
  const untilActive = async (stream: string): Promise<void> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { StreamDescriptionSummary } = await client.send(
        new DescribeStreamSummaryCommand({ StreamName: stream }),
      );
      if (StreamDescriptionSummary?.StreamStatus === "ACTIVE") return;
      if (Date.now() > deadline) throw new Error(`stream ${stream} did not become ACTIVE`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const shards = async (stream: string): Promise<Shard[]> =>
    (await client.send(new ListShardsCommand({ StreamName: stream }))).Shards ?? [];
  return {
    mock,
    endpoint: mock.endpoint,
    region: REGION,
    async createStream(stream, count) {
      await client.send(new CreateStreamCommand({ StreamName: stream, ShardCount: count }));
      await untilActive(stream);
    },
    async put(stream, records) {
      const { FailedRecordCount } = await client.send(
        new PutRecordsCommand({
          StreamName: stream,
          Records: records.map((r) => ({
            PartitionKey: r.partitionKey,
            Data: Buffer.from(typeof r.data === "string" ? r.data : JSON.stringify(r.data)),
          })),
        }),
      );
      if (FailedRecordCount) throw new Error(`${FailedRecordCount} records were not put`);
    },
    shards,
    async split(stream, shardId) {
      const shard = (await shards(stream)).find((s) => s.ShardId === shardId);
      const range = shard?.HashKeyRange;
      if (!range?.StartingHashKey || !range.EndingHashKey) throw new Error(`no shard ${shardId}`);
      const middle = (BigInt(range.StartingHashKey) + BigInt(range.EndingHashKey)) / 2n;
      await client.send(
        new SplitShardCommand({
          StreamName: stream,
          ShardToSplit: shardId,
          NewStartingHashKey: String(middle + 1n),
        }),
      );
      await untilActive(stream);
    },
    async merge(stream, shardId, adjacentShardId) {
      await client.send(
        new MergeShardsCommand({
          StreamName: stream,
          ShardToMerge: shardId,
          AdjacentShardToMerge: adjacentShardId,
        }),
      );
      await untilActive(stream);
    },
    async stop() {
      client.destroy();
      await mock.stop();
    },
  };
}
