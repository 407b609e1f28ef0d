import {
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  KinesisClient,
  ListShardsCommand,
  type Shard,
} from "@aws-sdk/client-kinesis";
import { AWS_CALL_LIMITS, limitedCalls } from "./aws-clients.ts";
import type { KinesisShard, KinesisShardRead, KinesisStream, ShardPosition } from "./event-streams.ts";
import { kinesisStreamName, kinesisStreamRegion, type KinesisSource } from "../pipeline/source-schema.ts";

/** The Kinesis adapter on the AWS SDK: ListShards, GetShardIterator, GetRecords; no KCL, no lease table. */

/** GetRecords' own maximum per call. */
const MAX_RECORDS_PER_CALL = 10_000;
/** Empty answers in a row (an iterator crossing a gap) before a read reports what it has. */
const EMPTY_READS = 3;

export class SdkKinesisStream implements KinesisStream {
  readonly #client: KinesisClient;
  readonly #stream: { StreamName: string } | { StreamARN: string };

  constructor(source: KinesisSource) {
    const region = source.region ?? kinesisStreamRegion(source.stream);
    this.#client = new KinesisClient({
      ...(region ? { region } : {}),
      ...(source.endpoint ? { endpoint: source.endpoint } : {}),
      // The SDK's default for Kinesis is HTTP/2, which only SubscribeToShard needs; the calls here
      // are plain requests, and HTTP/1.1 (the limited handler's) reaches VPC endpoints and emulators alike.
      ...limitedCalls(AWS_CALL_LIMITS.idleMs.other),
    });
    this.#stream = source.stream.startsWith("arn:")
      ? { StreamARN: source.stream }
      : { StreamName: kinesisStreamName(source.stream) };
  }

  async shards(): Promise<KinesisShard[]> {
    const shards: KinesisShard[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.#client.send(
        new ListShardsCommand(nextToken ? { NextToken: nextToken } : { ...this.#stream }),
      );
      shards.push(...(page.Shards ?? []).map(toShard));
      nextToken = page.NextToken;
    } while (nextToken);
    return shards;
  }

  async read(shardId: string, position: ShardPosition, limit: number): Promise<KinesisShardRead> {
    const { ShardIterator } = await this.#client.send(
      new GetShardIteratorCommand({ ...this.#stream, ShardId: shardId, ...iteratorStart(position) }),
    );
    let iterator = ShardIterator;
    const records: KinesisShardRead["records"][number][] = [];
    let empty = 0;
    let behind: number | undefined;
    while (iterator && records.length < limit) {
      const page = await this.#client.send(
        new GetRecordsCommand({
          ShardIterator: iterator,
          Limit: Math.min(MAX_RECORDS_PER_CALL, limit - records.length),
        }),
      );
      for (const record of page.Records ?? []) {
        records.push({
          sequenceNumber: record.SequenceNumber!,
          partitionKey: record.PartitionKey ?? "",
          key: null,
          value: record.Data ?? null,
          timestamp: record.ApproximateArrivalTimestamp?.getTime() ?? 0,
          headers: [],
        });
      }
      iterator = page.NextShardIterator;
      if (page.MillisBehindLatest !== undefined) behind = page.MillisBehindLatest;
      const empties = (page.Records ?? []).length === 0;
      if (empties && (page.MillisBehindLatest ?? 0) === 0) break;
      empty = empties ? empty + 1 : 0;
      if (empty >= EMPTY_READS) break;
    }
    // No next iterator: the shard is closed and this read reached its end.
    return {
      records,
      drained: iterator === undefined || iterator === null,
      ...(behind !== undefined ? { millisBehindLatest: behind } : {}),
    };
  }

  async retentionMs(): Promise<number> {
    const { StreamDescriptionSummary } = await this.#client.send(
      new DescribeStreamSummaryCommand({ ...this.#stream }),
    );
    return (StreamDescriptionSummary?.RetentionPeriodHours ?? 24) * 3_600_000;
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }
}

function toShard(shard: Shard): KinesisShard {
  const parents = [shard.ParentShardId, shard.AdjacentParentShardId].filter((id): id is string => !!id);
  const ending = shard.SequenceNumberRange?.EndingSequenceNumber;
  return {
    shardId: shard.ShardId!,
    parents,
    startingSequenceNumber: shard.SequenceNumberRange?.StartingSequenceNumber ?? "0",
    ...(ending ? { endingSequenceNumber: ending } : {}),
  };
}

function iteratorStart(position: ShardPosition) {
  switch (position.type) {
    case "TRIM_HORIZON":
    case "LATEST":
      return { ShardIteratorType: position.type };
    case "AT_TIMESTAMP":
      return { ShardIteratorType: "AT_TIMESTAMP" as const, Timestamp: new Date(position.timestamp) };
    case "AFTER_SEQUENCE_NUMBER":
      return {
        ShardIteratorType: "AFTER_SEQUENCE_NUMBER" as const,
        StartingSequenceNumber: position.sequenceNumber,
      };
  }
}
