import type { KafkaSource } from "../pipeline/source-schema.ts";
import type { KafkaPartitionRange } from "../store/event-streams.ts";
import type { KafkaOffsetRange } from "./planned-input.ts";
import type { KafkaOffset } from "./source-offsets.ts";

/**
 * The next batch of a `kafka` source, planned from the partitions' offsets (pure):
 *
 * 1. Each partition starts where the previous offset left it; one it does not hold yet starts at the
 *    flow's `starting_offsets` (first batch) or at its earliest (a partition created since).
 * 2. A partition whose start is before its earliest lost records to retention: that is an error for
 *    the caller to report, never a silent skip.
 * 3. `max_offsets_per_batch` is shared between partitions in proportion to what each has waiting
 *    (Spark's `maxOffsetsPerTrigger`), the remainder going to partitions in order, so every partition
 *    with records moves and none starves.
 * 4. No record to take: no batch — except a first batch that starts at `latest` (or at given
 *    offsets), which is planned empty so the starting point is recorded and nothing produced later
 *    is skipped.
 */

export interface KafkaBatchPlan {
  readonly end: KafkaOffset;
  readonly records: number;
  /** Every partition was read up to its end as listed. */
  readonly caughtUp: boolean;
  /** Records the partitions held past `end` as listed (the flow's lag). */
  readonly behind: number;
}

export interface LostRecords {
  readonly topic: string;
  readonly partition: number;
  readonly from: number;
  readonly earliest: number;
}

export type KafkaPlanResult =
  | { readonly outcome: "batch"; readonly plan: KafkaBatchPlan }
  | { readonly outcome: "caught-up" }
  | { readonly outcome: "lost"; readonly lost: readonly LostRecords[] };

export function planKafkaBatch(
  ranges: readonly KafkaPartitionRange[],
  start: KafkaOffset | undefined,
  startingOffsets: KafkaSource["starting_offsets"],
  maxOffsets: number | undefined,
): KafkaPlanResult {
  const froms = ranges.map((range) => ({
    range,
    from: startOf(range, start, startingOffsets),
  }));
  const lost = froms
    .filter(({ range, from }) => from < range.earliest)
    .map(({ range, from }) => ({
      topic: range.topic,
      partition: range.partition,
      from,
      earliest: range.earliest,
    }));
  if (lost.length > 0) return { outcome: "lost", lost };

  const waiting = froms.map(({ range, from }) => Math.max(0, range.end - from));
  const total = waiting.reduce((sum, n) => sum + n, 0);
  const takes = share(waiting, maxOffsets === undefined ? total : Math.min(total, maxOffsets));
  const next: Record<string, Record<string, number>> = {};
  const started: Record<string, Record<string, number>> = {};
  // Partitions the previous offset held but the topic no longer lists (a deleted topic) are kept as they were.
  for (const [topic, partitions] of Object.entries(start?.next ?? {}))
    for (const [partition, offset] of Object.entries(partitions)) (next[topic] ??= {})[partition] = offset;
  froms.forEach(({ range, from }, i) => {
    const held = start?.next[range.topic]?.[String(range.partition)] !== undefined;
    if (!held && takes[i] === 0 && !recordsStart(start, startingOffsets)) return;
    (next[range.topic] ??= {})[String(range.partition)] = from + takes[i]!;
    if (!held) (started[range.topic] ??= {})[String(range.partition)] = from;
  });
  const records = takes.reduce((sum, n) => sum + n, 0);
  const end: KafkaOffset = { kind: "kafka", next, ...(Object.keys(started).length > 0 ? { started } : {}) };
  if (records === 0 && (start !== undefined || !recordsStart(start, startingOffsets) || ranges.length === 0))
    return { outcome: "caught-up" };
  return { outcome: "batch", plan: { end, records, caughtUp: records === total, behind: total - records } };
}

/** Records between `start` and `end`, every partition (what a batch's record bound counts). */
export function recordsBetween(start: KafkaOffset | undefined, end: KafkaOffset): number {
  let records = 0;
  for (const [topic, partitions] of Object.entries(end.next))
    for (const [key, until] of Object.entries(partitions))
      records += Math.max(0, until - readFrom(topic, Number(key), start, end));
  return records;
}

/** The offsets the batch from `start` to `end` reads, per partition (those with records only). */
export function plannedRanges(start: KafkaOffset | undefined, end: KafkaOffset): KafkaOffsetRange[] {
  const ranges: KafkaOffsetRange[] = [];
  for (const [topic, partitions] of Object.entries(end.next))
    for (const [key, until] of Object.entries(partitions)) {
      const partition = Number(key);
      const from = readFrom(topic, partition, start, end);
      if (from < until) ranges.push({ topic, partition, from, until });
    }
  return ranges;
}

/** Where the batch reads a partition from: the previous offset, else `started`, else the starting rule. */
export function readFrom(
  topic: string,
  partition: number,
  start: KafkaOffset | undefined,
  end: KafkaOffset,
): number {
  const key = String(partition);
  return start?.next[topic]?.[key] ?? end.started?.[topic]?.[key] ?? end.next[topic]?.[key] ?? 0;
}

function startOf(
  range: KafkaPartitionRange,
  start: KafkaOffset | undefined,
  startingOffsets: KafkaSource["starting_offsets"],
): number {
  const held = start?.next[range.topic]?.[String(range.partition)];
  if (held !== undefined) return held;
  // A partition created after the first batch: all of it is new.
  if (start !== undefined || startingOffsets === "earliest") return range.earliest;
  if (startingOffsets === "latest") return range.end;
  const given = startingOffsets[range.topic]?.[String(range.partition)] ?? "earliest";
  return given === "earliest" ? range.earliest : given === "latest" ? range.end : given;
}

/** A first batch records where it started even with nothing to read, unless that is "earliest". */
function recordsStart(
  start: KafkaOffset | undefined,
  startingOffsets: KafkaSource["starting_offsets"],
): boolean {
  return start === undefined && startingOffsets !== "earliest";
}

/** Splits `limit` over the waiting counts in proportion, remainder in order; never more than waits. */
function share(waiting: readonly number[], limit: number): number[] {
  const total = waiting.reduce((sum, n) => sum + n, 0);
  if (total <= limit) return [...waiting];
  const takes = waiting.map((n) => Math.floor((n * limit) / total));
  let left = limit - takes.reduce((sum, n) => sum + n, 0);
  for (let i = 0; left > 0; i = (i + 1) % waiting.length) {
    if (takes[i]! < waiting[i]!) {
      takes[i]! += 1;
      left -= 1;
    }
  }
  return takes;
}
