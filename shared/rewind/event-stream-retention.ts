import type { EventStreams, KafkaRetention } from "../store/event-streams.ts";
import type { KafkaOffset, KinesisOffset } from "../engine/source-offsets.ts";
import { describeInterval } from "../pipeline/duration.ts";
import { kinesisStreamName, type KafkaSource, type KinesisSource } from "../pipeline/source-schema.ts";
import type { MissingPiece } from "./errors.ts";

/**
 * Whether an event stream still holds what a replay from a rewind target reads (semantics.md
 * "Rewind request": source retention). Each gap is a missing piece naming the topic and partition
 * (or stream and shard) and how far back the stream keeps data.
 *
 * - Kafka: every partition of the target must still hold its target offset (its earliest offset is
 *   at or before it); a partition the target did not hold yet (created since) must still start at 0.
 *   The earliest offsets are the broker's own, so segments deleted by age (`retention.ms`), by size
 *   (`retention.bytes`) or by DeleteRecords are all seen; the message names the earliest offset, says
 *   the records were deleted or expired (which of these is not known), and gives the topic's retention
 *   settings as context.
 * - Kinesis: every shard the target had not drained must still be listed, and the target must be
 *   younger than the stream's retention, or the records after its positions may have been trimmed.
 */

export async function kafkaRetentionGaps(
  streams: EventStreams,
  flow: string,
  source: KafkaSource,
  target: KafkaOffset,
): Promise<MissingPiece[]> {
  const client = streams.kafka(source);
  try {
    // The broker's earliest offsets are the truth whichever limit (age, size, or a DeleteRecords call)
    // moved them; the settings only explain the gap.
    const gaps: { topic: string; partition: number; earliest: number; needed: number }[] = [];
    for (const range of await client.partitions()) {
      const needed = target.next[range.topic]?.[String(range.partition)] ?? 0;
      if (range.earliest > needed) gaps.push({ ...range, needed });
    }
    const kept = new Map<string, KafkaRetention>();
    for (const gap of gaps) if (!kept.has(gap.topic)) kept.set(gap.topic, await client.retention(gap.topic));
    return gaps.map((gap) => {
      const keeps = describeKafkaRetention(kept.get(gap.topic) ?? {});
      // What moved the start (age, size, DeleteRecords) is not known: the settings are context only.
      return {
        owner: flow,
        what: `topic ${gap.topic} partition ${gap.partition} now starts at offset ${gap.earliest}, but a replay from the target reads from offset ${gap.needed}: the records before offset ${gap.earliest} were deleted or expired${keeps ? ` (the topic's retention settings: ${keeps})` : ""}`,
      };
    });
  } finally {
    await client.close();
  }
}

/** `data for 1 day, retention.ms=86400000, and at most 1 MiB a partition, retention.bytes=1048576`. */
export function describeKafkaRetention(retention: KafkaRetention): string {
  const limits = [
    ...(retention.ms !== undefined
      ? [`data for ${describeInterval(retention.ms)}, retention.ms=${retention.ms}`]
      : []),
    ...(retention.bytes !== undefined
      ? [`at most ${describeBytes(retention.bytes)} a partition, retention.bytes=${retention.bytes}`]
      : []),
  ];
  return limits.join(", and ");
}

const BYTE_UNITS = [
  ["GiB", 1 << 30],
  ["MiB", 1 << 20],
  ["KiB", 1 << 10],
] as const;

/** `1048576` → `1 MiB`; a size no unit divides is given in bytes. */
function describeBytes(bytes: number): string {
  for (const [unit, size] of BYTE_UNITS)
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  return `${bytes} bytes`;
}

export async function kinesisRetentionGaps(
  streams: EventStreams,
  flow: string,
  source: KinesisSource,
  target: KinesisOffset,
  targetTime: number,
  now: number,
): Promise<MissingPiece[]> {
  const client = streams.kinesis(source);
  const stream = kinesisStreamName(source.stream);
  try {
    const [shards, retention] = await Promise.all([client.shards(), client.retentionMs()]);
    const keeps = `the stream keeps data for ${describeInterval(retention)}`;
    const listed = new Set(shards.map((s) => s.shardId));
    const gaps: MissingPiece[] = [];
    for (const [shardId, entry] of Object.entries(target.shards)) {
      if (entry.drained || listed.has(shardId)) continue;
      gaps.push({
        owner: flow,
        what: `stream ${stream} shard ${shardId} is gone (${keeps}), and a replay from the target reads it`,
      });
    }
    if (now - targetTime > retention) {
      const shardIds = Object.entries(target.shards)
        .filter(([, entry]) => !entry.drained)
        .map(([id]) => id);
      gaps.push({
        owner: flow,
        what: `stream ${stream} shard${shardIds.length === 1 ? "" : "s"} ${shardIds.join(", ") || "(all)"}: the target is older than the stream's horizon (${keeps}), so records after its positions may be trimmed`,
      });
    }
    return gaps;
  } finally {
    await client.close();
  }
}
