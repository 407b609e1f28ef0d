import type { FlowOptions } from "../pipeline/definition-schema.ts";
import type { KafkaSource } from "../pipeline/source-schema.ts";
import { SourceRecordsExpiredError } from "./errors.ts";
import { loadEventRows, type EventBatchLayout, type EventRow } from "./event-records.ts";
import { KafkaOffsetsGoneError, type KafkaTopics } from "../store/event-streams.ts";
import { planKafkaBatch, plannedRanges, recordsBetween, type LostRecords } from "./kafka-batch-plan.ts";
import type { PlannedInput } from "./planned-input.ts";
import type { Sandbox } from "./sandbox.ts";
import type { KafkaOffset } from "./source-offsets.ts";

/**
 * The `kafka` source: a batch is a range of offsets per partition (`kafka-batch-plan.ts`), read from
 * the broker with plain fetches and loaded as `source` with the columns `key, value, topic,
 * partition, offset, timestamp, headers` (Spark's Kafka source, with headers as a list of key/value
 * structs). Offsets are the checkpoint's, so a retried batch reads exactly the same records.
 */

export interface KafkaBatchSource {
  plan(
    start: KafkaOffset | undefined,
  ): Promise<
    { end: KafkaOffset; caughtUp: boolean; records: number; backlog: { records: number } } | undefined
  >;
  /** The batch as the Spark engine reads it: the same offsets, named instead of fetched. */
  plannedInput(start: KafkaOffset | undefined, end: KafkaOffset): PlannedInput;
  /** Loads the records between the offsets into `goodTable` / `badTable`; returns counts. */
  load(
    start: KafkaOffset | undefined,
    end: KafkaOffset,
    sandbox: Sandbox,
    tables: { good: string; bad: string },
  ): Promise<{ rows: number; bad: number; newestTimestamp?: number }>;
}

export function kafkaBatchSource(
  flow: string,
  source: KafkaSource,
  options: FlowOptions,
  topics: () => KafkaTopics,
): KafkaBatchSource {
  return {
    async plan(start) {
      const client = topics();
      try {
        const result = planKafkaBatch(
          await client.partitions(),
          start,
          source.starting_offsets,
          options.max_offsets_per_batch,
        );
        if (result.outcome === "lost") throw expired(flow, result.lost);
        if (result.outcome === "caught-up") return undefined;
        const end = result.plan.end;
        return {
          end,
          caughtUp: result.plan.caughtUp,
          records: recordsBetween(start, end),
          backlog: { records: result.plan.behind },
        };
      } finally {
        await client.close();
      }
    },
    plannedInput(start, end) {
      return { kind: "kafka", source, ranges: plannedRanges(start, end) };
    },
    async load(start, end, sandbox, tables) {
      const client = topics();
      const rows: EventRow[] = [];
      let newestTimestamp: number | undefined;
      try {
        for (const { topic, partition, from, until } of plannedRanges(start, end)) {
          try {
            for await (const records of client.read(topic, partition, from, until)) {
              for (const record of records) {
                newestTimestamp = Math.max(newestTimestamp ?? -Infinity, record.timestamp);
                rows.push({
                  payload: record.value,
                  where: `${topic}/${partition}`,
                  line: record.offset,
                  values: {
                    key: encodeKey(record.key, source.key_format),
                    topic,
                    partition,
                    offset: record.offset,
                    timestamp: record.timestamp,
                    headers: record.headers,
                  },
                });
              }
            }
          } catch (error) {
            if (!(error instanceof KafkaOffsetsGoneError)) throw error;
            throw expired(flow, [{ topic, partition, from: error.offset, earliest: error.earliest }]);
          }
        }
      } finally {
        await client.close();
      }
      const bad = await loadEventRows(sandbox, kafkaLayout(source), rows, tables.good, tables.bad);
      return { rows: rows.length, bad, ...(newestTimestamp !== undefined ? { newestTimestamp } : {}) };
    },
  };
}

/** The columns of a Kafka batch. */
export function kafkaLayout(source: KafkaSource): EventBatchLayout {
  const bytes = source.key_format === "bytes";
  return {
    payload: "value",
    format: source.value_format,
    ...(source.schema ? { schema: source.schema } : {}),
    columns: [
      { name: "key", type: "VARCHAR", ...(bytes ? { select: "from_base64(key)" } : {}) },
      { name: "topic", type: "VARCHAR" },
      { name: "partition", type: "INTEGER" },
      { name: "offset", type: "BIGINT" },
      { name: "timestamp", type: "BIGINT", select: "epoch_ms(timestamp)" },
      { name: "headers", type: "STRUCT(key VARCHAR, value VARCHAR)[]" },
    ],
  };
}

function encodeKey(key: Uint8Array | null, format: "string" | "bytes"): string | null {
  if (key === null) return null;
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString(
    format === "bytes" ? "base64" : "utf8",
  );
}

function expired(flow: string, lost: readonly LostRecords[]): SourceRecordsExpiredError {
  return new SourceRecordsExpiredError(
    flow,
    lost.map(
      (l) =>
        `topic ${l.topic} partition ${l.partition} now starts at offset ${l.earliest}, but the flow is at offset ${l.from}`,
    ),
  );
}
