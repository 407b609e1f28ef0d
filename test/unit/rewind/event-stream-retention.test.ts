import { describe, expect, it } from "vitest";
import type {
  EventStreams,
  KafkaPartitionRange,
  KafkaRetention,
  KafkaTopics,
} from "../../../shared/store/event-streams.ts";
import { kafkaSourceSchema } from "../../../shared/pipeline/event-stream-sources.ts";
import { describeKafkaRetention, kafkaRetentionGaps } from "../../../shared/rewind/event-stream-retention.ts";

/**
 * The Kafka retention check on a topic as a broker describes it: the partitions' earliest offsets
 * decide, whichever limit moved them; the topic's settings are only named. (The same check against a
 * real broker whose segments are deleted by age and by size: the kafka integration test.)
 */

const source = kafkaSourceSchema.parse({
  type: "kafka",
  bootstrap_servers: "127.0.0.1:9092",
  topic: "orders",
});

function cluster(ranges: KafkaPartitionRange[], retention: KafkaRetention): EventStreams {
  const topics: KafkaTopics = {
    partitions: () => Promise.resolve(ranges),
    read: () => {
      throw new Error("the retention check reads no records");
    },
    retention: () => Promise.resolve(retention),
    close: () => Promise.resolve(),
  };
  return {
    kafka: () => topics,
    kinesis: () => {
      throw new Error("no Kinesis here");
    },
  };
}

const range = (partition: number, earliest: number, end = 100): KafkaPartitionRange => ({
  topic: "orders",
  partition,
  earliest,
  end,
});

describe("kafkaRetentionGaps", () => {
  const target = { kind: "kafka" as const, next: { orders: { "0": 10, "1": 20 } } };

  it("finds none while every partition still holds the target's offset", async () => {
    const streams = cluster([range(0, 10), range(1, 0)], { ms: 3_600_000 });
    expect(await kafkaRetentionGaps(streams, "ingest", source, target)).toEqual([]);
  });

  it("names each partition whose earliest offset passed the target's, with the topic's retention settings", async () => {
    const streams = cluster([range(0, 11), range(1, 20), range(2, 0)], { bytes: 1 << 20 });
    expect(await kafkaRetentionGaps(streams, "ingest", source, target)).toEqual([
      {
        owner: "ingest",
        what: "topic orders partition 0 now starts at offset 11, but a replay from the target reads from offset 10: the records before offset 11 were deleted or expired (the topic's retention settings: at most 1 MiB a partition, retention.bytes=1048576)",
      },
    ]);
  });

  it("counts a partition created since the target from offset 0", async () => {
    const streams = cluster([range(0, 10), range(1, 20), range(2, 3)], {});
    expect(await kafkaRetentionGaps(streams, "ingest", source, target)).toEqual([
      {
        owner: "ingest",
        what: "topic orders partition 2 now starts at offset 3, but a replay from the target reads from offset 0: the records before offset 3 were deleted or expired",
      },
    ]);
  });
});

describe("describeKafkaRetention", () => {
  it.each([
    [{ ms: 86_400_000 }, "data for 1 day, retention.ms=86400000"],
    [{ bytes: 1 << 30 }, "at most 1 GiB a partition, retention.bytes=1073741824"],
    [{ bytes: 1500 }, "at most 1500 bytes a partition, retention.bytes=1500"],
    [
      { ms: 2_000, bytes: 64 << 10 },
      "data for 2 seconds, retention.ms=2000, and at most 64 KiB a partition, retention.bytes=65536",
    ],
    [{}, ""],
  ])("%j → %s", (retention, text) => {
    expect(describeKafkaRetention(retention)).toBe(text);
  });
});
