import type { Checkpoint, FlowHead, SourceOffsets } from "../store/checkpoints-repository.ts";
import { readFrom } from "./kafka-batch-plan.ts";
import type { KafkaOffset } from "./source-offsets.ts";

/**
 * Replayed records: after a rewind (or a checkpoint reset) moves a flow's HEAD back, its next batches
 * read again records it had processed before. The frontier is where the flow stood before the move:
 *
 * 1. The first batch after the move finds the abandoned branch among the checkpoints above HEAD: the
 *    newest COMMITTED one at or below `abandonedThrough` was HEAD when it moved. Its offsets (or the
 *    frontier it still carried, when it was itself part of a replay) are the frontier.
 * 2. Each batch counts its records at or before the frontier (the source's own rule:
 *    `FlowSource.replay`), reported as the flow_progress event's `metrics.replayed_records`.
 * 3. A batch whose end is still short of the frontier keeps it on its checkpoint (`replayUntil`), for
 *    the next batch, which may be in a later update; the first batch that reaches it drops it.
 */
export function replayFrontier(
  head: FlowHead,
  after: readonly Checkpoint[],
  abandonedThrough: number,
): SourceOffsets | undefined {
  const abandoned = after
    .filter((checkpoint) => checkpoint.status === "COMMITTED" && checkpoint.seq <= abandonedThrough)
    .reduce<Checkpoint | undefined>((newest, c) => (newest && newest.seq > c.seq ? newest : c), undefined);
  if (abandoned) return abandoned.replayUntil ?? abandoned.offsets;
  return head.checkpoint?.replayUntil;
}

/**
 * A Kafka batch's records at or before the frontier: per partition, the offsets from where the batch
 * starts to the lesser of its end and the frontier's (a partition the frontier never read: none).
 */
export function kafkaRecordsReplayed(
  start: KafkaOffset | undefined,
  end: KafkaOffset,
  frontier: KafkaOffset,
): number {
  let replayed = 0;
  for (const [topic, partitions] of Object.entries(end.next)) {
    for (const [key, until] of Object.entries(partitions)) {
      const reached = frontier.next[topic]?.[key];
      if (reached === undefined) continue;
      const from = readFrom(topic, Number(key), start, end);
      replayed += Math.max(0, Math.min(until, reached) - from);
    }
  }
  return replayed;
}

/** Whether some partition of the frontier is still ahead of `end`. */
export function kafkaBehind(end: KafkaOffset, frontier: KafkaOffset): boolean {
  return Object.entries(frontier.next).some(([topic, partitions]) =>
    Object.entries(partitions).some(([key, reached]) => (end.next[topic]?.[key] ?? 0) < reached),
  );
}
