import { quoteIdentifier } from "../../duck/sql-text.ts";
import type { StateSchema, StateVersion, StateWriter } from "../../state/index.ts";
import type { Sandbox } from "../sandbox.ts";
import { eventTimeSql } from "./watermark.ts";

/**
 * Deduplication by key across batches (Spark's `dropDuplicates` / `dropDuplicatesWithinWatermark`).
 * State table `dedup`: one row per key seen, with its event time when kept within the watermark.
 *
 * Within the watermark, a key expires as in Spark's `StreamingDeduplicateWithinWatermarkExec`: at its
 * first kept row's event time plus the watermark delay (later duplicates do not extend it), and it is
 * let go by the first batch whose watermark for eviction is at or past that expiry. Spark's watermark
 * for eviction in a batch is the one computed from the batches before it: here, the watermark the
 * batch started with (the one its late rows were dropped by), not the one it advances to.
 *
 * 1. Within the batch, the first row of each key (arrival order) survives: one narrow hash aggregate
 *    gives each key with its first row's number (and event time).
 * 2. Those keys are read from the state; a key found there is dropped.
 * 3. The surviving keys are remembered (inserted: step 2 showed the state does not hold them),
 *    except those already expired (they would be let go at once).
 * 4. Within the watermark: keys of the state that have expired are let go.
 * 5. The batch's output is its rows whose number survived, as a filter over the batch (so in arrival
 *    order, with no join to reorder them and no sort to restore it): the surviving numbers are one
 *    bitstring, bit n - 1 for row n, in a session variable the filter reads. The caller materializes
 *    the rows once, as the flow's `source`.
 */

export const DEDUP_TABLE = "dedup";
const EVENT_TIME = "event_time";
const FIRST = "__ebb_dedup_first";
const SEEN = "__ebb_dedup_seen";
const NEW = "__ebb_dedup_new";
const SURVIVORS = "__ebb_dedup_survivors";

export interface DeduplicateRequest {
  readonly sandbox: Sandbox;
  readonly version: StateVersion;
  readonly writer: StateWriter;
  /** The batch's rows, with `rowColumn` numbering them in arrival order. */
  readonly input: string;
  readonly rowColumn: string;
  readonly keys: readonly { readonly name: string; readonly type: string }[];
  /**
   * Within the watermark: the event time column, the watermark's delay, and the watermark the batch
   * started with (epoch µs; undefined before any event), which lets go of expired keys.
   */
  readonly eventTime?: {
    readonly column: string;
    readonly delayMicros: number;
    readonly watermark: number | undefined;
  };
}

export function dedupSchema(keys: DeduplicateRequest["keys"], withinWatermark: boolean): StateSchema {
  return {
    key: keys.map((k) => ({ name: k.name, type: k.type })),
    value: withinWatermark ? [{ name: EVENT_TIME, type: "TIMESTAMP" }] : [],
  };
}

export async function deduplicate(
  request: DeduplicateRequest,
): Promise<{ rowsSql: string; duplicates: number }> {
  const { sandbox, eventTime } = request;
  const table = request.version.table(
    DEDUP_TABLE,
    dedupSchema(request.keys, eventTime !== undefined),
    eventTime ? { timeColumn: EVENT_TIME } : {},
  );
  const keyList = request.keys.map((k) => quoteIdentifier(k.name)).join(", ");
  const row = quoteIdentifier(request.rowColumn);
  const time = eventTime ? `, arg_min(${eventTimeSql(eventTime.column)}, ${row}) AS ${EVENT_TIME}` : "";

  // 1.
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${FIRST} AS SELECT ${keyList}, min(${row}) AS ${row}${time} FROM ${request.input} GROUP BY ${keyList}`,
  );
  // 2.
  await table.loadKeys(sandbox, `SELECT ${keyList} FROM ${FIRST}`, SEEN, { distinct: true });
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${NEW} AS SELECT f.* FROM ${FIRST} f ANTI JOIN ${SEEN} s ON ${table.keyMatch("f", "s")}`,
  );
  const [counts] = await sandbox.rows(
    `SELECT count(*)::BIGINT AS n, coalesce(max(${row}), 0)::BIGINT AS last, (SELECT count(*) FROM ${NEW})::BIGINT AS kept FROM ${request.input}`,
  );
  const rows = Number(counts?.["n"] ?? 0);
  // The input's highest number (a late row dropped before may have taken any number below it).
  const last = Number(counts?.["last"] ?? 0);
  // 3. A key expires once the watermark reaches event time + delay: it is kept while its event time
  // is after `expiredUpTo`.
  const watermark = eventTime?.watermark;
  const expiredUpTo =
    eventTime && watermark !== undefined ? Math.trunc(watermark) - eventTime.delayMicros : undefined;
  const fresh = eventTime
    ? `SELECT ${keyList}, ${EVENT_TIME} FROM ${NEW}` +
      (expiredUpTo !== undefined ? ` WHERE epoch_us(${EVENT_TIME}) > ${expiredUpTo}` : "")
    : `SELECT ${keyList} FROM ${NEW}`;
  request.writer.insert(table, fresh);
  // 4. The state's expired keys: event time at or before `expiredUpTo` (older than the next µs).
  if (expiredUpTo !== undefined) {
    await table.loadOlderThan(sandbox, expiredUpTo + 1, "__ebb_dedup_expired");
    request.writer.delete(table, `SELECT ${keyList} FROM __ebb_dedup_expired`);
  }
  // 5. Row numbers run from 1 to at most `last` (a batch has far fewer than the 2^31 rows a bitstring
  // index allows).
  if (last > 0)
    await sandbox.run(
      `SET VARIABLE ${SURVIVORS} = (SELECT bitstring_agg(${row}, 1::BIGINT, ${last}::BIGINT) FROM ${NEW})`,
    );
  return {
    rowsSql:
      last > 0
        ? `SELECT * FROM ${request.input} WHERE get_bit(getvariable('${SURVIVORS}'), (${row} - 1)::INTEGER) = 1`
        : `SELECT * FROM ${request.input}`,
    duplicates: rows - Number(counts?.["kept"] ?? 0),
  };
}
