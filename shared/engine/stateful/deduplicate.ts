import { quoteIdentifier } from "../../duck/sql-text.ts";
import type { StateSchema, StateVersion, StateWriter } from "../../state/index.ts";
import type { Sandbox } from "../sandbox.ts";
import { eventTimeSql } from "./watermark.ts";

/**
 * Deduplication by key across batches (Spark's `dropDuplicates` / `dropDuplicatesWithinWatermark`).
 * State table `dedup`: one row per key seen, with its event time when kept within the watermark.
 *
 * 1. Within the batch, the first row of each key (arrival order) survives.
 * 2. The keys the batch touches are read from the state; a row whose key is there is dropped.
 * 3. The surviving keys are remembered, except those already older than the advanced watermark
 *    (they would be let go at once).
 * 4. Within the watermark: keys of the state older than the advanced watermark are let go.
 */

export const DEDUP_TABLE = "dedup";
const EVENT_TIME = "event_time";

export interface DeduplicateRequest {
  readonly sandbox: Sandbox;
  readonly version: StateVersion;
  readonly writer: StateWriter;
  /** The batch's rows, with `rowColumn` numbering them in arrival order. */
  readonly input: string;
  readonly rowColumn: string;
  readonly keys: readonly { readonly name: string; readonly type: string }[];
  /** Within the watermark: the event time column and the watermark after this batch (epoch µs). */
  readonly eventTime?: { readonly column: string; readonly watermark: number | undefined };
}

export function dedupSchema(keys: DeduplicateRequest["keys"], withinWatermark: boolean): StateSchema {
  return {
    key: keys.map((k) => ({ name: k.name, type: k.type })),
    value: withinWatermark ? [{ name: EVENT_TIME, type: "TIMESTAMP" }] : [],
  };
}

export async function deduplicate(
  request: DeduplicateRequest,
): Promise<{ table: string; duplicates: number }> {
  const { sandbox, eventTime } = request;
  const table = request.version.table(
    DEDUP_TABLE,
    dedupSchema(request.keys, eventTime !== undefined),
    eventTime ? { timeColumn: EVENT_TIME } : {},
  );
  const keyList = request.keys.map((k) => quoteIdentifier(k.name)).join(", ");
  const row = quoteIdentifier(request.rowColumn);

  // 1.
  // (a hash aggregate: the rows are numbered, so each key's first is its smallest number)
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE __ebb_dedup_first AS SELECT * FROM ${request.input} ` +
      `WHERE ${row} IN (SELECT min(${row}) FROM ${request.input} GROUP BY ${keyList})`,
  );
  // 2.
  await table.loadKeys(sandbox, `SELECT ${keyList} FROM __ebb_dedup_first`, "__ebb_dedup_seen");
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE __ebb_dedup_out AS SELECT f.* FROM __ebb_dedup_first f ANTI JOIN __ebb_dedup_seen s ON ${table.keyMatch("f", "s")}`,
  );
  const [counts] = await sandbox.rows(
    `SELECT (SELECT count(*) FROM ${request.input})::BIGINT - (SELECT count(*) FROM __ebb_dedup_out)::BIGINT AS d`,
  );
  // 3.
  const watermark = eventTime?.watermark;
  const fresh = eventTime
    ? `SELECT ${keyList}, ${eventTimeSql(eventTime.column)} AS ${EVENT_TIME} FROM __ebb_dedup_out` +
      (watermark !== undefined
        ? ` WHERE epoch_us(${eventTimeSql(eventTime.column)}) >= ${Math.trunc(watermark)}`
        : "")
    : `SELECT ${keyList} FROM __ebb_dedup_out`;
  request.writer.upsert(table, fresh);
  // 4.
  if (eventTime && watermark !== undefined) {
    await table.loadOlderThan(sandbox, watermark, "__ebb_dedup_expired");
    request.writer.delete(table, `SELECT ${keyList} FROM __ebb_dedup_expired`);
  }
  return { table: "__ebb_dedup_out", duplicates: Number(counts?.["d"] ?? 0) };
}
