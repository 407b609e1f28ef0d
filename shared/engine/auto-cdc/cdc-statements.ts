import { quoteIdentifier as q } from "../../duck/sql-text.ts";
import { END_AT, START_AT, type CdcLayout } from "./cdc-layout.ts";

/**
 * The SQL of applying change events (pure text; it runs in the batch's sandbox). Every event of a key
 * is placed by its sequence, never by its arrival, so the result depends only on the set of events
 * seen, not on how they were split into batches:
 *
 * - Tie rule: two events of a key with equal sequence values are one event. A delete wins over an
 *   upsert; between two upserts the one whose row hashes higher (md5 of its JSON) wins, so exact
 *   duplicates are harmless and the outcome never depends on arrival.
 * - SCD type 1: a key's row is its highest-sequence event, unless that is a delete (a tombstone: a
 *   later-arriving older upsert stays deleted). `ignore_null_updates`: each column takes the last
 *   non-NULL value of the upserts after the key's last delete. A truncate at sequence T deletes every
 *   row and every event at or below T (a delete at T for every key).
 * - SCD type 2: the events of a key in sequence order form versions. An upsert starts a new version
 *   when there is no open one or a tracked column changes (after `ignore_null_updates` filled it);
 *   otherwise it updates the open version in place. A version runs from its first event's sequence
 *   (`__START_AT`) to the next version's start or the delete that closes it (`__END_AT`, NULL while
 *   current). A late event lands where its sequence puts it, closing and splitting versions.
 */

export const SEQ = "__cdc_seq";
export const OP = "__cdc_op";
export const TIE = "__cdc_tie";
/** When the event was applied (epoch time of its batch): tombstones expire by it. */
export const AT = "__cdc_at";
/** The state column holding a key's retained events, oldest first. */
export const EVENTS = "__cdc_events";
/** The MERGE source's marker: the row is a delete of its key (SCD1) or of its version (SCD2). */
export const DELETE_MARK = "__cdc_delete";

const list = (names: readonly string[], prefix = "") => names.map((n) => `${prefix}${q(n)}`).join(", ");
const keysEqual = (keys: readonly string[], a: string, b: string) =>
  keys.map((k) => `${a}.${q(k)} IS NOT DISTINCT FROM ${b}.${q(k)}`).join(" AND ");

/** The sequence expression over the output's columns (several compare in order, as a struct). */
export function sequenceExpression(layout: CdcLayout): string {
  if (layout.sequence.length === 1) return q(layout.sequence[0]!);
  return `struct_pack(${layout.sequence.map((c) => `${q(c)} := ${q(c)}`).join(", ")})`;
}

/** The batch's events: keys, values, sequence, kind, tie hash and time, from the flow's SQL rows. */
export function batchEventsSql(layout: CdcLayout, rowsSql: string, nowMicros: bigint): string {
  const kind = [
    ...(layout.truncates ? [`WHEN coalesce((${layout.truncates}), false) THEN 'truncate'`] : []),
    ...(layout.deletes ? [`WHEN coalesce((${layout.deletes}), false) THEN 'delete'`] : []),
  ];
  const op = kind.length > 0 ? `CASE ${kind.join(" ")} ELSE 'upsert' END` : `'upsert'`;
  const row = [...layout.keys, ...layout.values].map((c) => `${q(c)} := ${q(c)}`).join(", ");
  return (
    `SELECT ${list([...layout.keys, ...layout.values])}, ${sequenceExpression(layout)} AS ${SEQ}, ` +
    `${op} AS ${OP}, md5(to_json(struct_pack(${row}))) AS ${TIE}, make_timestamp(${nowMicros}) AS ${AT} ` +
    `FROM (${rowsSql})`
  );
}

/** Counts of events that cannot be applied: no sequence, or no key on a non-truncate. */
export function invalidEventsSql(layout: CdcLayout, batch: string): string {
  const nullKey = layout.keys.map((k) => `${q(k)} IS NULL`).join(" OR ");
  return (
    `SELECT count(*) FILTER (WHERE ${SEQ} IS NULL)::BIGINT AS null_sequences, ` +
    `count(*) FILTER (WHERE ${OP} <> 'truncate' AND (${nullKey}))::BIGINT AS null_keys FROM ${batch}`
  );
}

/** The state rows' events, one row each (`stateRows`: keys and the events list). */
export function stateEventsSql(layout: CdcLayout, stateRows: string): string {
  const fields = [SEQ, OP, TIE, ...layout.values, AT].map((c) => `__e.${q(c)} AS ${q(c)}`).join(", ");
  return `SELECT ${list(layout.keys)}, ${fields} FROM (SELECT ${list(layout.keys)}, UNNEST(${EVENTS}) AS __e FROM ${stateRows})`;
}

/** The events of both, one per key and sequence by the tie rule (the earlier-applied duplicate kept). */
export function mergedEventsSql(layout: CdcLayout, ...events: readonly string[]): string {
  const union = events.map((sql) => `SELECT * FROM (${sql})`).join(" UNION ALL BY NAME ");
  return (
    `SELECT * FROM (${union}) QUALIFY row_number() OVER (PARTITION BY ${list(layout.keys)}, ${SEQ} ` +
    `ORDER BY (${OP} = 'delete') DESC, ${TIE} DESC, ${AT}) = 1`
  );
}

/**
 * SCD type 1 rows of `events` (deduplicated): per key, the upserts after its last delete and after
 * the truncate sequence `truncatedBelow` (a SQL value or NULL) decide the row.
 */
export function scd1RowsSql(layout: CdcLayout, events: string, truncatedAtOrBelow: string): string {
  const value = (c: string) =>
    layout.ignoreNullUpdates
      ? `last(${q(c)} ORDER BY ${SEQ}) FILTER (WHERE ${q(c)} IS NOT NULL) AS ${q(c)}`
      : `last(${q(c)} ORDER BY ${SEQ}) AS ${q(c)}`;
  return (
    `WITH __ev AS (${events}), ` +
    `__ld AS (SELECT ${list(layout.keys)}, max(${SEQ}) AS __d FROM __ev WHERE ${OP} = 'delete' GROUP BY ALL) ` +
    `SELECT ${list(layout.keys, "__ev.")}${layout.values.map((c) => `, ${value(c)}`).join("")} ` +
    `FROM __ev LEFT JOIN __ld ON ${keysEqual(layout.keys, "__ev", "__ld")} ` +
    `WHERE __ev.${OP} = 'upsert' AND (__ld.__d IS NULL OR __ev.${SEQ} > __ld.__d) ` +
    `AND (${truncatedAtOrBelow} IS NULL OR __ev.${SEQ} > ${truncatedAtOrBelow}) ` +
    `GROUP BY ${list(layout.keys, "__ev.")}`
  );
}

/**
 * The SCD type 1 events worth keeping per key: none at or below the truncate sequence; then only the
 * latest (without `ignore_null_updates`) or those from the last delete on (with it). A key left with
 * only a delete applied before `expiredBefore` (a TIMESTAMP SQL value) is dropped: its tombstone
 * expired.
 */
export function scd1RetainedSql(
  layout: CdcLayout,
  events: string,
  truncatedAtOrBelow: string,
  expiredBefore: string,
): string {
  const partition = `PARTITION BY ${list(layout.keys)}`;
  const keep = layout.ignoreNullUpdates
    ? `${SEQ} >= coalesce(max(CASE WHEN ${OP} = 'delete' THEN ${SEQ} END) OVER (${partition}), ${SEQ})`
    : `${SEQ} = max(${SEQ}) OVER (${partition})`;
  return (
    `SELECT * EXCLUDE (__keep) FROM (SELECT *, ${keep} AS __keep FROM (${events}) ` +
    `WHERE ${truncatedAtOrBelow} IS NULL OR ${SEQ} > ${truncatedAtOrBelow}) WHERE __keep ` +
    `QUALIFY NOT (count(*) OVER (${partition}) = 1 AND ${OP} = 'delete' AND ${AT} < ${expiredBefore})`
  );
}

/** SCD type 2 versions of `events` (deduplicated): keys, values, `__START_AT`, `__END_AT`. */
export function scd2VersionsSql(layout: CdcLayout, events: string): string {
  const partition = `PARTITION BY ${list(layout.keys)}`;
  const effective = layout.values
    .map((c) =>
      layout.ignoreNullUpdates
        ? `last_value(CASE WHEN ${OP} = 'upsert' THEN ${q(c)} END IGNORE NULLS) OVER (${partition}, __seg ORDER BY ${SEQ} ROWS UNBOUNDED PRECEDING) AS ${q(c)}`
        : `CASE WHEN ${OP} = 'upsert' THEN ${q(c)} END AS ${q(c)}`,
    )
    .map((c) => `, ${c}`)
    .join("");
  const tracked =
    layout.tracked.length > 0
      ? `struct_pack(${layout.tracked.map((c) => `${q(c)} := ${q(c)}`).join(", ")})`
      : "0";
  return (
    `WITH __seg AS (SELECT *, sum(CASE WHEN ${OP} = 'delete' THEN 1 ELSE 0 END) OVER (${partition} ORDER BY ${SEQ} ROWS UNBOUNDED PRECEDING) AS __seg FROM (${events})), ` +
    `__eff AS (SELECT ${list(layout.keys)}, ${SEQ}, ${OP}${effective} FROM __seg), ` +
    `__marks AS (SELECT *, ${OP} = 'upsert' AND (lag(${OP}) OVER __w IS DISTINCT FROM 'upsert' OR lag(${tracked}) OVER __w IS DISTINCT FROM ${tracked}) AS __starts, ` +
    `lead(${SEQ}) OVER __w AS __next FROM __eff WINDOW __w AS (${partition} ORDER BY ${SEQ})), ` +
    `__vers AS (SELECT *, sum(CASE WHEN __starts THEN 1 ELSE 0 END) OVER (${partition} ORDER BY ${SEQ} ROWS UNBOUNDED PRECEDING) AS __version FROM __marks) ` +
    `SELECT ${list(layout.keys)}${layout.values.map((c) => `, last(${q(c)} ORDER BY ${SEQ}) AS ${q(c)}`).join("")}, ` +
    `min(${SEQ}) AS ${q(START_AT)}, last(__next ORDER BY ${SEQ}) AS ${q(END_AT)} ` +
    `FROM __vers WHERE ${OP} = 'upsert' GROUP BY ${list(layout.keys)}, __version`
  );
}

/**
 * The MERGE source: rows of `after` that `before` does not hold (upserts), and a delete mark for each
 * identity in `gone` (keys for type 1, keys and `__START_AT` for type 2).
 */
export function mergeSourceSql(after: string, before: string, gone: string): string {
  return (
    `SELECT *, false AS ${DELETE_MARK} FROM (SELECT * FROM (${after}) EXCEPT SELECT * FROM (${before})) ` +
    `UNION ALL BY NAME SELECT *, true AS ${DELETE_MARK} FROM (${gone})`
  );
}

/**
 * Adds to `before` (SCD type 2 versions) the target's rows of the keys `unseen` selects (keys the
 * state lacks), with the target columns `present` that `before` has; `before`'s others stay NULL.
 */
export function adoptedRowsSql(
  layout: CdcLayout,
  before: string,
  targetSql: string,
  present: readonly string[],
  unseen: string,
): string {
  const wanted = [...layout.keys, ...layout.values, START_AT, END_AT].filter((c) => present.includes(c));
  return (
    `INSERT INTO ${q(before)} BY NAME SELECT ${list(wanted, "__t.")} FROM (${targetSql}) __t ` +
    `SEMI JOIN (${unseen}) __u ON ${layout.keys.map((k) => `__t.${q(k)} = __u.${q(k)}`).join(" AND ")}`
  );
}

/** The state rows of retained events: keys and their events, oldest first. */
export function stateRowsSql(layout: CdcLayout, events: string): string {
  const fields = [SEQ, OP, TIE, ...layout.values, AT].map((c) => `${q(c)} := ${q(c)}`).join(", ");
  return `SELECT ${list(layout.keys)}, list(struct_pack(${fields}) ORDER BY ${SEQ}) AS ${EVENTS} FROM (${events}) GROUP BY ALL`;
}

/** The columns a MERGE matches target rows on. */
export function identityColumns(layout: CdcLayout): readonly string[] {
  return layout.scdType === 1 ? layout.keys : [...layout.keys, START_AT];
}
