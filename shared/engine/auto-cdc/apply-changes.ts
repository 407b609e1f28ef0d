import { quoteIdentifier as q, quoteLiteral } from "../../duck/sql-text.ts";
import type { AutoCdcFlowPlan } from "../../pipeline/plan/index.ts";
import { TOMBSTONE_PROPERTY } from "../../pipeline/auto-cdc-rules.ts";
import type { Sandbox } from "../sandbox.ts";
import { checkCdcLayout } from "./cdc-compatibility.ts";
import { cdcLayout, START_AT, storedLayoutOf, type CdcLayout } from "./cdc-layout.ts";
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
import { IncompatibleStateError } from "../../state/index.ts";
import { AutoCdcEventError, AutoCdcFlowsIncompatibleError } from "./errors.ts";

/**
 * One AUTO CDC batch, in the batch's sandbox (the SQL is cdc-statements.ts):
 *
 * 1. The flow's rows become events (keys, values, sequence, kind, tie hash); events without a
 *    sequence, or without a key, fail the batch, and so does a layout the state was not written
 *    under (cdc-compatibility.ts).
 * 2. The state rows of the keys the batch touches are loaded (every row when a truncate moves the
 *    truncate sequence up: it reaches every key), from this flow's state and, read only, from the
 *    states of the other AUTO CDC flows into the target (`peers`, at their HEAD): the target is what
 *    the events of all its flows give together, so a late older event of one flow never overwrites
 *    a newer one of another.
 * 3. The target's rows for those keys are computed twice, from the states' events (before) and from
 *    those plus the batch's (after); the MERGE source is what changed: new or changed rows, and a
 *    delete mark for each row that is gone. After a checkpoint reset (a state `adopting` the
 *    table), SCD type 2 takes the before-rows from the table instead, which may still hold versions
 *    of events no state has any more: the versions the re-read no longer produces are deleted, not
 *    left beside the new ones.
 * 4. The next state version (each touched key's retained events of this flow) is written, before
 *    the table commit: a retried batch recomputes the same state and rewrites it.
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
  /** The flow as compiled at validation. */
  readonly cdc: AutoCdcFlowPlan;
  readonly sandbox: Sandbox;
  /** The flow's SQL over the micro-batch (checked). */
  readonly rowsSql: string;
  readonly state: CdcState;
  /** The other AUTO CDC flows into the target: their names and states at HEAD (read only). */
  readonly peers?: readonly { readonly flow: string; readonly state: CdcState }[];
  /** The target's name (for messages). */
  readonly target: string;
  readonly seq: number;
  readonly now: number;
  readonly tombstoneGcSeconds: number;
  /**
   * The target's current rows (a SELECT), when the state does not cover them (after a checkpoint
   * reset, SCD type 2): the state then adopts the table key by key.
   */
  readonly targetRowsSql?: string;
  /**
   * The rows carry each event's kind in `OP` already, classified by the engine that ran the flow's
   * SQL (Spark evaluates `apply_as_deletes` and `apply_as_truncates` in its own SQL): taken as is.
   */
  readonly classified?: boolean;
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
const OWN = "__cdc_own_events";
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
  const described = (await sandbox.rows(`DESCRIBE (${batch.rowsSql})`)).map((r) => String(r["column_name"]));
  const output = batch.classified ? described.filter((c) => c !== OP) : described;
  const layout = batch.classified
    ? classifiedLayout(cdcLayout(batch.flow, batch.cdc, output))
    : cdcLayout(batch.flow, batch.cdc, output);
  const peers = batch.peers ?? [];
  checkCdcLayout(
    { flow: batch.flow, target: batch.target, flows: [batch.flow, ...peers.map((p) => p.flow)] },
    batch.state.meta.layout,
    layout,
  );
  const keys = layout.keys.map((k) => q(k)).join(", ");

  // 1. Events.
  await table(BATCH, batchEventsSql(layout, batch.rowsSql, BigInt(batch.now) * 1000n));
  const [invalid] = await sandbox.rows(invalidEventsSql(layout, BATCH));
  const nullSequences = Number(invalid?.["null_sequences"] ?? 0);
  const nullKeys = Number(invalid?.["null_keys"] ?? 0);
  if (nullSequences + nullKeys > 0) throw new AutoCdcEventError(batch.flow, nullSequences, nullKeys);
  const changes = `SELECT * FROM ${BATCH} WHERE ${OP} <> 'truncate'`;

  // 2. Truncate sequences and the state of the touched keys.
  const [sequenceType] = await sandbox.rows(
    `SELECT column_type AS t FROM (DESCRIBE ${BATCH}) WHERE column_name = ${quoteLiteral(SEQ)}`,
  );
  const type = String(sequenceType?.["t"]);
  const sequenceValue = (json: string) => `CAST(${quoteLiteral(json)}::JSON AS ${type})`;
  const stored = [batch.state, ...peers.map((p) => p.state)].flatMap((s) => s.meta.truncate ?? []);
  const batchTruncate = `(SELECT max(${SEQ}) FROM ${BATCH} WHERE ${OP} = 'truncate')`;
  const own = batch.state.meta.truncate
    ? sequenceValue(batch.state.meta.truncate.json)
    : `CAST(NULL AS ${type})`;
  const [truncate] = await sandbox.rows(
    `SELECT to_json(o)::VARCHAR AS before, CASE WHEN b IS NOT NULL AND (o IS NULL OR b > o) THEN to_json(b)::VARCHAR END AS moved, ` +
      `CASE WHEN b IS NOT NULL AND (s IS NULL OR b > s) THEN to_json(b)::VARCHAR END AS own ` +
      `FROM (SELECT (SELECT max(v) FROM (VALUES (CAST(NULL AS ${type}))${stored.map((t) => `, (${sequenceValue(t.json)})`).join("")}) t(v)) AS o, ` +
      `${own} AS s, ${batchTruncate} AS b)`,
  );
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const before = text(truncate?.["before"]);
  const moved = text(truncate?.["moved"]);
  const ownMoved = text(truncate?.["own"]);
  const truncatedBefore = before !== undefined ? sequenceValue(before) : `CAST(NULL AS ${type})`;
  const truncatedAfter = moved ? sequenceValue(moved) : truncatedBefore;
  const truncated = ownMoved ? { json: ownMoved, type } : batch.state.meta.truncate;
  const meta: CdcStateMeta = {
    layout: storedLayoutOf(layout),
    ...(truncated ? { truncate: truncated } : {}),
    ...(batch.targetRowsSql !== undefined ? { adopting: true as const } : {}),
  };
  const shape = stateRowsSql(layout, changes);
  const touchedKeys = moved ? undefined : `SELECT DISTINCT ${keys} FROM (${changes})`;
  await batch.state.load(sandbox, PRIOR, shape, touchedKeys);
  const peerEvents: string[] = [];
  for (const [i, peer] of peers.entries()) {
    const into = `${PRIOR}_peer${i}`;
    try {
      await peer.state.load(sandbox, into, shape, touchedKeys);
    } catch (error) {
      if (!(error instanceof IncompatibleStateError)) throw error;
      throw new AutoCdcFlowsIncompatibleError(batch.flow, peer.flow, batch.target, { cause: error });
    }
    peerEvents.push(stateEventsSql(layout, into));
  }

  // 3. Before and after, and what changed.
  await table(OWN, stateEventsSql(layout, PRIOR));
  await table(
    OLD,
    peers.length > 0
      ? mergedEventsSql(layout, `SELECT * FROM ${OWN}`, ...peerEvents)
      : `SELECT * FROM ${OWN}`,
  );
  await table(ALL, mergedEventsSql(layout, `SELECT * FROM ${OLD}`, changes));
  const priorKeys = [PRIOR, ...peers.map((_, i) => `${PRIOR}_peer${i}`)]
    .map((t) => `SELECT ${keys} FROM ${t} UNION `)
    .join("");
  await table(TOUCHED, `${priorKeys}SELECT ${keys} FROM (${changes})`);
  if (layout.scdType === 1) {
    await table(BEFORE, scd1RowsSql(layout, `SELECT * FROM ${OLD}`, truncatedBefore));
    await table(AFTER, scd1RowsSql(layout, `SELECT * FROM ${ALL}`, truncatedAfter));
    const gone = `SELECT ${keys} FROM ${TOUCHED} EXCEPT SELECT ${keys} FROM ${AFTER}`;
    await table(MERGE, mergeSourceSql(`SELECT * FROM ${AFTER}`, `SELECT * FROM ${BEFORE}`, gone));
  } else {
    if (batch.targetRowsSql === undefined)
      await table(BEFORE, scd2VersionsSql(layout, `SELECT * FROM ${OLD}`));
    else {
      await table(BEFORE, `${scd2VersionsSql(layout, `SELECT * FROM ${OLD}`)} LIMIT 0`);
      const present = await sandbox.rows(`DESCRIBE (${batch.targetRowsSql})`);
      const columns = present.map((r) => String(r["column_name"]));
      await sandbox.run(
        adoptedRowsSql(layout, BEFORE, batch.targetRowsSql, columns, `SELECT ${keys} FROM ${TOUCHED}`),
      );
    }
    await table(AFTER, scd2VersionsSql(layout, `SELECT * FROM ${ALL}`));
    const identity = `${keys}, ${q(START_AT)}`;
    const gone = `SELECT ${identity} FROM ${BEFORE} EXCEPT SELECT ${identity} FROM ${AFTER}`;
    await table(MERGE, mergeSourceSql(`SELECT * FROM ${AFTER}`, `SELECT * FROM ${BEFORE}`, gone));
  }

  // 4. The next state version.
  const expiredBefore = `make_timestamp(${BigInt(batch.now - batch.tombstoneGcSeconds * 1000) * 1000n})`;
  const ownAll =
    peers.length > 0 ? mergedEventsSql(layout, `SELECT * FROM ${OWN}`, changes) : `SELECT * FROM ${ALL}`;
  const retained =
    layout.scdType === 1 ? scd1RetainedSql(layout, ownAll, truncatedAfter, expiredBefore) : ownAll;
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

/** A layout whose event kinds are read from the rows' `OP` column (`ChangeBatch.classified`). */
function classifiedLayout(layout: CdcLayout): CdcLayout {
  const { deletes: _deletes, truncates: _truncates, ...rest } = layout;
  return {
    ...rest,
    ...(layout.deletes !== undefined ? { deletes: `${q(OP)} = 'delete'` } : {}),
    ...(layout.truncates !== undefined ? { truncates: `${q(OP)} = 'truncate'` } : {}),
  };
}
