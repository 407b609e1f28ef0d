import type { KinesisShard, ShardPosition } from "../store/event-streams.ts";
import type { KinesisOffset } from "./source-offsets.ts";

/**
 * Which shards of a Kinesis stream a batch reads, and from where (pure). Resharding (a split or a
 * merge) closes shards and opens children that name them as parents; a child is read only once every
 * parent the stream still lists has been drained, so records of one partition key are read in order.
 * A parent past the stream's retention is no longer listed and holds nothing to wait for.
 */

type ShardEntry = KinesisOffset["shards"][string];

export interface ReadableShard {
  readonly shardId: string;
  readonly position: ShardPosition;
  /** The shard is closed (a read that reaches its end drains it). */
  readonly closed: boolean;
}

export function readableShards(
  shards: readonly KinesisShard[],
  offset: KinesisOffset | undefined,
  first: ShardPosition,
): ReadableShard[] {
  const listed = new Set(shards.map((s) => s.shardId));
  const entries = offset?.shards ?? {};
  return shards
    .filter((shard) => !entries[shard.shardId]?.drained)
    .filter((shard) => shard.parents.every((parent) => !listed.has(parent) || entries[parent]?.drained))
    .map((shard) => ({
      shardId: shard.shardId,
      // A shard first seen after the flow started (a child of a reshard) is all new: from its start.
      position: positionOf(entries[shard.shardId], offset === undefined ? first : TRIM_HORIZON),
      closed: shard.endingSequenceNumber !== undefined,
    }));
}

const TRIM_HORIZON: ShardPosition = { type: "TRIM_HORIZON" };

/** Where to read a shard from its offset entry; `fresh` when the flow has read nothing of it. */
export function positionOf(entry: ShardEntry | undefined, fresh: ShardPosition): ShardPosition {
  if (entry?.after !== undefined) return { type: "AFTER_SEQUENCE_NUMBER", sequenceNumber: entry.after };
  if (entry?.at !== undefined) return { type: "AT_TIMESTAMP", timestamp: entry.at };
  return fresh;
}

/** Kinesis sequence numbers are decimal strings of up to 128 bits: compared as integers. */
export function compareSequenceNumbers(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
