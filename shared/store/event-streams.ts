import type { KafkaSource, KinesisSource } from "../pipeline/source-schema.ts";

/**
 * The ports to event streams a flow reads (Kafka topics, Kinesis streams): positions are plain
 * numbers and strings, records plain bytes, so the planning and the checks stay pure and testable.
 * Adapters: `kafka-topics.ts`, `kinesis-shards.ts` (opened lazily by `event-stream-clients.ts`).
 */

/** One partition of a topic: the offsets it holds now, `[earliest, end)`. */
export interface KafkaPartitionRange {
  readonly topic: string;
  readonly partition: number;
  /** The first offset still held (retention moves it). */
  readonly earliest: number;
  /** The offset the next record will get (the high watermark). */
  readonly end: number;
}

export interface StreamRecord {
  readonly key: Uint8Array | null;
  readonly value: Uint8Array | null;
  /** Epoch milliseconds. */
  readonly timestamp: number;
  readonly headers: readonly { readonly key: string; readonly value: string | null }[];
}

export interface KafkaRecord extends StreamRecord {
  readonly offset: number;
}

/** `read` met a partition that now starts after the offset asked for (retention removed them). */
export class KafkaOffsetsGoneError extends Error {
  override readonly name = "KafkaOffsetsGoneError";
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly offset: number,
    readonly earliest: number,
  ) {
    super(`topic ${topic} partition ${partition} now starts at offset ${earliest}, after offset ${offset}`);
  }
}

/**
 * A topic's retention settings: the broker deletes a partition's oldest segments once they are older
 * than `ms` or once the partition holds more than `bytes`, whichever comes first. Undefined: no limit
 * (`-1`) or not known.
 */
export interface KafkaRetention {
  readonly ms?: number;
  /** Per partition. */
  readonly bytes?: number;
}

/** One Kafka cluster, as a source's settings reach it. */
export interface KafkaTopics {
  /** The topics the source reads (its topic, topics, or the ones matching its pattern), with every partition. */
  partitions(): Promise<KafkaPartitionRange[]>;
  /** The records of a partition with `from <= offset < until`, in offset order; `KafkaOffsetsGoneError` if `from` is gone. */
  read(topic: string, partition: number, from: number, until: number): AsyncIterable<KafkaRecord[]>;
  /** How far back the topic keeps records, as configured (`retention.ms`, `retention.bytes`). */
  retention(topic: string): Promise<KafkaRetention>;
  close(): Promise<void>;
}

/** One Kinesis shard, as ListShards describes it. */
export interface KinesisShard {
  readonly shardId: string;
  readonly parents: readonly string[];
  /** The shard's first sequence number. */
  readonly startingSequenceNumber: string;
  /** Set once the shard is closed (a split or merge): no record comes after it. */
  readonly endingSequenceNumber?: string;
}

export interface KinesisRecord extends StreamRecord {
  readonly sequenceNumber: string;
  readonly partitionKey: string;
}

/** Where a shard iterator starts. */
export type ShardPosition =
  | { readonly type: "TRIM_HORIZON" }
  | { readonly type: "LATEST" }
  | { readonly type: "AT_TIMESTAMP"; readonly timestamp: number }
  | { readonly type: "AFTER_SEQUENCE_NUMBER"; readonly sequenceNumber: string };

export interface KinesisShardRead {
  readonly records: readonly KinesisRecord[];
  /** The shard is closed and every record of it has been read. */
  readonly drained: boolean;
  /**
   * How far the read's last position is behind the shard's newest record (GetRecords'
   * `MillisBehindLatest`), when the stream said.
   */
  readonly millisBehindLatest?: number;
}

/** One Kinesis stream. */
export interface KinesisStream {
  /** Every shard the stream still holds (open and closed within retention). */
  shards(): Promise<KinesisShard[]>;
  /** At most `limit` records of a shard from `position` on; a read that reaches the shard's end says so. */
  read(shardId: string, position: ShardPosition, limit: number): Promise<KinesisShardRead>;
  /** How long the stream keeps records (`RetentionPeriodHours`). */
  retentionMs(): Promise<number>;
  close(): Promise<void>;
}

/** Opens the clients a source's settings describe. */
export interface EventStreams {
  kafka(source: KafkaSource): KafkaTopics;
  kinesis(source: KinesisSource): KinesisStream;
}
