import type { FlowOptions } from "../pipeline/definition-schema.ts";
import { kinesisStreamName, type KinesisSource } from "../pipeline/source-schema.ts";
import { parseTimestamp } from "../pipeline/timestamp.ts";
import { SourceRecordsExpiredError } from "./errors.ts";
import { loadEventRows, type EventBatchLayout, type EventRow } from "./event-records.ts";
import type { KinesisRecord, KinesisStream, ShardPosition } from "../store/event-streams.ts";
import { compareSequenceNumbers, positionOf, readableShards } from "./kinesis-shard-plan.ts";
import type { Sandbox } from "./sandbox.ts";
import type { KinesisOffset } from "./source-offsets.ts";

/**
 * The `kinesis` source. Kinesis cannot say how many records a shard holds past a position, so
 * planning reads: the records it fetched are kept for the load that follows in the same task, and a
 * resumed batch reads its shards again from the start offset up to the end offset's sequence numbers,
 * so a retry reads exactly the same records.
 *
 * 1. Readable shards (`kinesis-shard-plan.ts`): not drained, parents drained.
 * 2. Read each, at most its share of `max_offsets_per_batch` (default: one GetRecords' worth).
 * 3. End offset: per shard, the last sequence number read; drained when a closed shard ran out. A
 *    first batch from LATEST or AT_TIMESTAMP pins its start time in every shard it could read.
 * 4. Nothing read, nothing drained, nothing pinned: no batch.
 */

/** GetRecords' own maximum. */
const DEFAULT_RECORDS_PER_SHARD = 10_000;

export interface KinesisBatchSource {
  plan(
    start: KinesisOffset | undefined,
  ): Promise<{ end: KinesisOffset; caughtUp: boolean; backlog?: { seconds: number } } | undefined>;
  load(
    start: KinesisOffset | undefined,
    end: KinesisOffset,
    sandbox: Sandbox,
    tables: { good: string; bad: string },
  ): Promise<{ rows: number; bad: number; newestTimestamp?: number }>;
}

export function kinesisBatchSource(
  flow: string,
  source: KinesisSource,
  options: FlowOptions,
  stream: () => KinesisStream,
  clock: () => number = Date.now,
): KinesisBatchSource {
  const streamName = kinesisStreamName(source.stream);
  let planned: { end: KinesisOffset; records: Map<string, KinesisRecord[]> } | undefined;

  const firstPosition = (): ShardPosition => {
    if (source.starting_position === "TRIM_HORIZON") return { type: "TRIM_HORIZON" };
    const at = source.starting_position === "LATEST" ? clock() : parseTimestamp(source.starting_timestamp!)!;
    return { type: "AT_TIMESTAMP", timestamp: at };
  };

  return {
    async plan(start) {
      const client = stream();
      try {
        const first = firstPosition();
        const shards = readableShards(await client.shards(), start, first);
        if (shards.length === 0) return undefined;
        const limit = options.max_offsets_per_batch;
        const perShard =
          limit === undefined ? DEFAULT_RECORDS_PER_SHARD : Math.max(1, Math.floor(limit / shards.length));
        const next: KinesisOffset["shards"] = { ...(start?.shards ?? {}) };
        const records = new Map<string, KinesisRecord[]>();
        let moved = false;
        let caughtUp = true;
        // The shard furthest behind its newest record, after this batch's reads (MillisBehindLatest).
        let behindMs: number | undefined;
        for (const shard of shards) {
          const read = await client.read(shard.shardId, shard.position, perShard);
          if (read.millisBehindLatest !== undefined)
            behindMs = Math.max(behindMs ?? 0, read.millisBehindLatest);
          const last = read.records.at(-1);
          records.set(shard.shardId, [...read.records]);
          const entry = { ...(next[shard.shardId] ?? {}) };
          if (last) entry.after = last.sequenceNumber;
          else if (start === undefined && first.type === "AT_TIMESTAMP") entry.at = first.timestamp;
          if (read.drained) entry.drained = true;
          if (last || read.drained || entry.at !== next[shard.shardId]?.at) moved = true;
          // A full read may have left records behind; a drained shard may have let children in.
          if (read.records.length >= perShard || read.drained) caughtUp = false;
          next[shard.shardId] = entry;
        }
        if (!moved) return undefined;
        const end: KinesisOffset = { kind: "kinesis", shards: next };
        planned = { end, records };
        return {
          end,
          caughtUp,
          ...(behindMs !== undefined ? { backlog: { seconds: behindMs / 1000 } } : {}),
        };
      } finally {
        await client.close();
      }
    },
    async load(start, end, sandbox, tables) {
      const records =
        planned && JSON.stringify(planned.end) === JSON.stringify(end)
          ? planned.records
          : await readAgain(flow, streamName, stream, start, end, firstPosition());
      const rows: EventRow[] = [];
      let newestTimestamp: number | undefined;
      for (const [shardId, shardRecords] of records) {
        for (const record of shardRecords) {
          newestTimestamp = Math.max(newestTimestamp ?? -Infinity, record.timestamp);
          rows.push({
            payload: record.value,
            where: `${streamName}/${shardId}/${record.sequenceNumber}`,
            line: 1,
            values: {
              partition_key: record.partitionKey,
              stream: streamName,
              shard_id: shardId,
              sequence_number: record.sequenceNumber,
              approximate_arrival_timestamp: record.timestamp,
            },
          });
        }
      }
      const bad = await loadEventRows(sandbox, kinesisLayout(source), rows, tables.good, tables.bad);
      return { rows: rows.length, bad, ...(newestTimestamp !== undefined ? { newestTimestamp } : {}) };
    },
  };
}

/** A resumed batch: each shard from the start offset's position through the end offset's sequence number. */
async function readAgain(
  flow: string,
  streamName: string,
  stream: () => KinesisStream,
  start: KinesisOffset | undefined,
  end: KinesisOffset,
  first: ShardPosition,
): Promise<Map<string, KinesisRecord[]>> {
  const client = stream();
  const records = new Map<string, KinesisRecord[]>();
  try {
    for (const [shardId, entry] of Object.entries(end.shards)) {
      const before = start?.shards[shardId];
      if (entry.after === undefined || entry.after === before?.after) continue;
      let position = positionOf(before, start === undefined ? first : { type: "TRIM_HORIZON" });
      const read: KinesisRecord[] = [];
      for (;;) {
        const batch = await client.read(shardId, position, DEFAULT_RECORDS_PER_SHARD);
        const kept = batch.records.filter((r) => compareSequenceNumbers(r.sequenceNumber, entry.after!) <= 0);
        read.push(...kept);
        const last = read.at(-1);
        if (last && compareSequenceNumbers(last.sequenceNumber, entry.after) >= 0) break;
        if (kept.length < batch.records.length || batch.records.length === 0) {
          throw new SourceRecordsExpiredError(flow, [
            `stream ${streamName} shard ${shardId} no longer holds the records up to sequence number ${entry.after} that the batch planned`,
          ]);
        }
        position = { type: "AFTER_SEQUENCE_NUMBER", sequenceNumber: last!.sequenceNumber };
      }
      records.set(shardId, read);
    }
  } finally {
    await client.close();
  }
  return records;
}

/** The columns of a Kinesis batch (Databricks' Kinesis source, in snake case). */
export function kinesisLayout(source: KinesisSource): EventBatchLayout {
  return {
    payload: "data",
    format: source.data_format,
    ...(source.schema ? { schema: source.schema } : {}),
    columns: [
      { name: "partition_key", type: "VARCHAR" },
      { name: "stream", type: "VARCHAR" },
      { name: "shard_id", type: "VARCHAR" },
      { name: "sequence_number", type: "VARCHAR" },
      {
        name: "approximate_arrival_timestamp",
        type: "BIGINT",
        select: "epoch_ms(approximate_arrival_timestamp)",
      },
    ],
  };
}
