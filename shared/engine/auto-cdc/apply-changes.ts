import { quoteIdentifier as q, quoteLiteral } from "../../duck/sql-text.ts";
import type { AutoCdcDefinition } from "../../pipeline/auto-cdc-schema.ts";
import { TOMBSTONE_PROPERTY } from "../../pipeline/auto-cdc-rules.ts";
import type { Sandbox } from "../sandbox.ts";
import { cdcLayout, START_AT, type CdcLayout } from "./cdc-layout.ts";
import type { CdcState, CdcStateMeta } from "./cdc-state.ts";
import {
  adoptedRowsSql,
  batchEventsSql,
  DELETE_MARK,
  identityColumns,
  invalidEventsSql,
  mergedEventsSql,
  mergeSourceSql,
  OP,
  scd1RetainedSql,
  scd1RowsSql,
  scd2VersionsSql,
  SEQ,
  stateEventsSql,
  stateRowsSql,
} from "./cdc-statements.ts";
import { AutoCdcEventError } from "./errors.ts";

/**
 * One AUTO CDC batch, in the batch's sandbox (the SQL is cdc-statements.ts):
 *
 * 1. The flow's rows become events (keys, values, sequence, kind, tie hash); events without a
 *    sequence, or without a key, fail the batch.
 * 2. The state rows of the keys the batch touches are loaded (every row when a truncate moves the
 *    truncate sequence up: it reaches every key).
 * 3. The target's rows for those keys are computed twice, from the state's events (before) and from
 *    those plus the batch's (after); the MERGE source is what changed: new or changed rows, and a
 *    delete mark for each row that is gone. After a checkpoint reset (the state `adopting` the
 *    table), an SCD type 2 key the state lacks takes its before-rows from the table instead: the
 *    versions the re-read no longer produces are deleted, not left beside the new ones.
 * 4. The next state version (each touched key's retained events) is written, before the table commit:
 *    a retried batch recomputes the same state and rewrites it.
 *
 * Returns the MERGE for the table commit, which the caller makes with the batch's txn.
 */

/** Databricks' default tombstone retention for AUTO CDC: two days. */
export const DEFAULT_TOMBSTONE_GC_SECONDS = 172_800;

/** The tombstone retention a target's properties set (seconds), or the default. */
export function tombstoneRetentionSeconds(properties: Readonly<Record<string, string>> | undefined): number {
  const value = properties?.[TOMBSTONE_PROPERTY];
  return value === undefined ? DEFAULT_TOMBSTONE_GC_SECONDS : Number(value);
}

export interface ChangeBatch {
  readonly flow: string;
  readonly cdc: AutoCdcDefinition;
  readonly sandbox: Sandbox;
  /** The flow's SQL over the micro-batch (checked). */
  readonly rowsSql: string;
  readonly state: CdcState;
  readonly seq: number;
  readonly now: number;
  readonly tombstoneGcSeconds: number;
  /**
   * The target's current rows (a SELECT), when the state does not cover them (after a checkpoint
   * reset, SCD type 2): the state then adopts the table key by key.
   */
  readonly targetRowsSql?: string;
}

export interface PlannedChanges {
  readonly layout: CdcLayout;
  /** MERGE source: the target's columns plus `__cdc_delete`. */
  readonly sourceSql: string;
  /** The target's columns, no rows (to create the table). */
  readonly schemaSql: string;
  /** The columns a target row is matched on. */
  readonly on: readonly string[];
  /** The state version the batch wrote (for its checkpoint). */
  readonly stateVersion: string | undefined;
}

const BATCH = "__cdc_batch";
const PRIOR = "__cdc_prior";
const OLD = "__cdc_old_events";
const ALL = "__cdc_all_events";
const BEFORE = "__cdc_before";
const AFTER = "__cdc_after";
const TOUCHED = "__cdc_touched";
const MERGE = "__cdc_merge";

export async function applyChanges(batch: ChangeBatch): Promise<PlannedChanges> {
  const { sandbox } = batch;
  const table = async (name: string, sql: string) =>
    sandbox.run(`CREATE OR REPLACE TEMP TABLE ${q(name)} AS ${sql}`);
  const output = (await sandbox.rows(`DESCRIBE (${batch.rowsSql})`)).map((r) => String(r["column_name"]));
  const layout = cdcLayout(batch.flow, batch.cdc, output);
  const keys = layout.keys.map((k) => q(k)).join(", ");

  // 1. Events.
  await table(BATCH, batchEventsSql(layout, batch.rowsSql, BigInt(batch.now) * 1000n));
  const [invalid] = await sandbox.rows(invalidEventsSql(layout, BATCH));
  const nullSequences = Number(invalid?.["null_sequences"] ?? 0);
  const nullKeys = Number(invalid?.["null_keys"] ?? 0);
  if (nullSequences + nullKeys > 0) throw new AutoCdcEventError(batch.flow, nullSequences, nullKeys);
  const changes = `SELECT * FROM ${BATCH} WHERE ${OP} <> 'truncate'`;

  // 2. Truncate sequences and the state of the touched keys.
  const [described] = await sandbox.rows(
    `SELECT column_type AS t FROM (DESCRIBE ${BATCH}) WHERE column_name = ${quoteLiteral(SEQ)}`,
  );
  const type = String(described?.["t"]);
  const truncatedBefore = batch.state.meta.truncate
    ? `CAST(${quoteLiteral(batch.state.meta.truncate.json)}::JSON AS ${type})`
    : `CAST(NULL AS ${type})`;
  const batchTruncate = `(SELECT max(${SEQ}) FROM ${BATCH} WHERE ${OP} = 'truncate')`;
  const [truncate] = await sandbox.rows(
    `SELECT CASE WHEN b IS NOT NULL AND (o IS NULL OR b > o) THEN to_json(b)::VARCHAR END AS moved ` +
      `FROM (SELECT ${truncatedBefore} AS o, ${batchTruncate} AS b)`,
  );
  const moved = typeof truncate?.["moved"] === "string" ? truncate["moved"] : undefined;
  const truncatedAfter = moved ? `CAST(${quoteLiteral(moved)}::JSON AS ${type})` : truncatedBefore;
  const truncated = moved ? { json: moved, type } : batch.state.meta.truncate;
  const meta: CdcStateMeta = {
    ...(truncated ? { truncate: truncated } : {}),
    ...(batch.targetRowsSql !== undefined ? { adopting: true as const } : {}),
  };
  await batch.state.load(
    sandbox,
    PRIOR,
    stateRowsSql(layout, changes),
    moved ? undefined : `SELECT DISTINCT ${keys} FROM (${changes})`,
  );

  // 3. Before and after, and what changed.
  await table(OLD, stateEventsSql(layout, PRIOR));
  await table(ALL, mergedEventsSql(layout, `SELECT * FROM ${OLD}`, changes));
  await table(TOUCHED, `SELECT ${keys} FROM ${PRIOR} UNION SELECT ${keys} FROM (${changes})`);
  if (layout.scdType === 1) {
    await table(BEFORE, scd1RowsSql(layout, `SELECT * FROM ${OLD}`, truncatedBefore));
    await table(AFTER, scd1RowsSql(layout, `SELECT * FROM ${ALL}`, truncatedAfter));
    const gone = `SELECT ${keys} FROM ${TOUCHED} EXCEPT SELECT ${keys} FROM ${AFTER}`;
    await table(MERGE, mergeSourceSql(`SELECT * FROM ${AFTER}`, `SELECT * FROM ${BEFORE}`, gone));
  } else {
    await table(BEFORE, scd2VersionsSql(layout, `SELECT * FROM ${OLD}`));
    if (batch.targetRowsSql !== undefined) {
      const present = await sandbox.rows(`DESCRIBE (${batch.targetRowsSql})`);
      const columns = present.map((r) => String(r["column_name"]));
      const unseen = `SELECT ${keys} FROM (${changes}) EXCEPT SELECT ${keys} FROM ${PRIOR}`;
      await sandbox.run(adoptedRowsSql(layout, BEFORE, batch.targetRowsSql, columns, unseen));
    }
    await table(AFTER, scd2VersionsSql(layout, `SELECT * FROM ${ALL}`));
    const identity = `${keys}, ${q(START_AT)}`;
    const gone = `SELECT ${identity} FROM ${BEFORE} EXCEPT SELECT ${identity} FROM ${AFTER}`;
    await table(MERGE, mergeSourceSql(`SELECT * FROM ${AFTER}`, `SELECT * FROM ${BEFORE}`, gone));
  }

  // 4. The next state version.
  const expiredBefore = `make_timestamp(${BigInt(batch.now - batch.tombstoneGcSeconds * 1000) * 1000n})`;
  const retained =
    layout.scdType === 1
      ? scd1RetainedSql(layout, `SELECT * FROM ${ALL}`, truncatedAfter, expiredBefore)
      : `SELECT * FROM ${ALL}`;
  await table("__cdc_retained", retained);
  const stateVersion = await batch.state.write(sandbox, batch.seq, {
    upsertSql: stateRowsSql(layout, `SELECT * FROM __cdc_retained`),
    deleteKeysSql: `SELECT ${keys} FROM ${TOUCHED} EXCEPT SELECT ${keys} FROM __cdc_retained`,
    meta,
  });

  return {
    layout,
    sourceSql: `SELECT * FROM ${MERGE}`,
    schemaSql: `SELECT * EXCLUDE (${DELETE_MARK}) FROM ${MERGE} LIMIT 0`,
    on: identityColumns(layout),
    stateVersion,
  };
}
