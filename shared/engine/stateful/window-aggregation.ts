import { quoteIdentifier } from "../../duck/sql-text.ts";
import {
  aggregateColumn,
  describeWindowChange,
  groupColumn,
  WINDOW_FINAL,
  WINDOW_ROWS,
  WINDOW_START,
  WINDOW_STRUCT,
  type WindowedFlowPlan,
} from "../../pipeline/plan/index.ts";
import {
  IncompatibleStateError,
  type StateSchema,
  type StateVersion,
  type StateWriter,
} from "../../state/index.ts";
import type { Sandbox } from "../sandbox.ts";
import { finalOf, partsOf } from "./partial-aggregates.ts";
import { eventTimeSql } from "./watermark.ts";

/**
 * Windowed aggregation in append mode (Spark's streaming `GROUP BY window(...)`). State table
 * `windows`: one row per open window and key, holding the partial aggregates.
 *
 * 1. Each surviving row goes into every window it falls in (one for tumbling, size/slide for sliding).
 * 2. The batch's partial aggregates per window and key (the flow's own SELECT, rewritten).
 * 3. The state rows of the windows the batch touches are read and merged with the batch's partials.
 * 4. A window whose end is at or before the advanced watermark is complete: it is emitted (from the
 *    merge, or from the state when the batch did not touch it) and let go. The rest stay in the state.
 * 5. The flow's select list runs over the emitted windows: those are the rows the batch appends.
 *
 * A row before the parent's watermark was dropped as late upstream, so a window, emitted when the
 * watermark passed its end, never gains a row again: each window is written once.
 */

export const WINDOWS_TABLE = "windows";
const BATCH = "__ebb_window_batch";
const SEEN = "__ebb_window_seen";
const MERGED = "__ebb_window_merged";
const EXPIRED = "__ebb_window_expired";
const EMIT = "__ebb_window_emit";

export interface WindowAggregateRequest {
  readonly sandbox: Sandbox;
  readonly version: StateVersion;
  readonly writer: StateWriter;
  readonly flowName: string;
  /** The batch's surviving rows. */
  readonly input: string;
  readonly plan: WindowedFlowPlan;
  /** The watermark after this batch (epoch µs); undefined before the first event. */
  readonly watermark: number | undefined;
}

/**
 * Refuses a state whose open windows were kept under another window signature (window, keys or
 * aggregates): its partials mean something else. A state without windows can start any.
 */
export function checkWindowState(version: StateVersion, flowName: string, signature: string): void {
  const stored = version.meta["window"];
  if (typeof stored === "string" && stored !== signature)
    throw new IncompatibleStateError(flowName, "window", ...describeWindowChange(stored, signature));
}

export async function aggregateWindows(
  request: WindowAggregateRequest,
): Promise<{ sql: string; windowsEmitted: number; windowsOpen: number }> {
  const { sandbox, plan, writer } = request;
  const { sizeMicros, slideMicros, column } = plan.window;
  checkWindowState(request.version, request.flowName, plan.stateSignature);
  writer.setMeta("window", plan.stateSignature);

  // 1. Window starts are multiples of the slide since the epoch (Spark's alignment).
  const count = Math.ceil(sizeMicros / slideMicros);
  const t = "__ebb_t";
  const last = `(${t} - (((${t} % ${slideMicros}) + ${slideMicros}) % ${slideMicros}))`;
  const start = `(${last} - __ebb_k * ${slideMicros})`;
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${WINDOW_ROWS} AS SELECT * EXCLUDE (${t}, __ebb_k), make_timestamp(${start}) AS ${WINDOW_START} ` +
      `FROM (SELECT *, epoch_us(${eventTimeSql(column)}) AS ${t} FROM ${request.input}) CROSS JOIN range(0, ${count}) AS r(__ebb_k) ` +
      `WHERE ${start} + ${sizeMicros} > ${t}`,
  );

  // 2. Partial types as the batch gives them; integer sums are kept as BIGINT (Spark's sum of ints).
  await sandbox.run(`CREATE OR REPLACE TEMP TABLE __ebb_window_raw AS ${plan.partialSql}`);
  const types = new Map(
    (await sandbox.rows("DESCRIBE __ebb_window_raw")).map((r) => [
      String(r["column_name"]),
      String(r["column_type"]),
    ]),
  );
  const typeOf = (name: string) => (types.get(name) === "HUGEINT" ? "BIGINT" : types.get(name)!);
  const keys = [WINDOW_START, ...plan.groupKeys.map((_, j) => groupColumn(j))];
  const parts = plan.aggregates.flatMap((a, i) => partsOf(a.kind, i));
  const list = (names: readonly string[], prefix = "") =>
    names.map((n) => `${prefix}${quoteIdentifier(n)}`).join(", ");
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${BATCH} AS SELECT ${list(keys)}, ` +
      parts
        .map((p) => `CAST(${quoteIdentifier(p.name)} AS ${typeOf(p.name)}) AS ${quoteIdentifier(p.name)}`)
        .join(", ") +
      ` FROM __ebb_window_raw`,
  );
  const schema: StateSchema = {
    key: keys.map((name) => ({ name, type: typeOf(name) })),
    value: parts.map((p) => ({ name: p.name, type: typeOf(p.name) })),
  };
  const table = request.version.table(WINDOWS_TABLE, schema, { timeColumn: WINDOW_START });

  // 3.
  await table.loadKeys(sandbox, `SELECT ${list(keys)} FROM ${BATCH}`, SEEN);
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${MERGED} AS SELECT ${list(keys)}, ` +
      parts
        .map(
          (p) =>
            `CAST(${p.merge(quoteIdentifier(p.name), typeOf(p.name))} AS ${typeOf(p.name)}) AS ${quoteIdentifier(p.name)}`,
        )
        .join(", ") +
      ` FROM (SELECT * FROM ${BATCH} UNION ALL BY NAME SELECT * FROM ${SEEN}) GROUP BY ${list(keys)}`,
  );

  // 4. Complete: end <= watermark, i.e. start < watermark - size + 1.
  const watermark = request.watermark;
  const bound = watermark === undefined ? undefined : Math.trunc(watermark) - sizeMicros + 1;
  const open = bound === undefined ? "true" : `epoch_us(${quoteIdentifier(WINDOW_START)}) >= ${bound}`;
  if (bound !== undefined) {
    await table.loadOlderThan(sandbox, bound, EXPIRED);
    await sandbox.run(
      `CREATE OR REPLACE TEMP TABLE ${EMIT} AS SELECT * FROM ${MERGED} WHERE NOT (${open}) ` +
        `UNION ALL BY NAME SELECT e.* FROM ${EXPIRED} e ANTI JOIN ${MERGED} m ON ${table.keyMatch("e", "m")}`,
    );
    writer.delete(table, `SELECT ${list(keys)} FROM ${EMIT}`);
  } else {
    await sandbox.run(`CREATE OR REPLACE TEMP TABLE ${EMIT} AS SELECT * FROM ${MERGED} WHERE false`);
  }
  writer.upsert(table, `SELECT * FROM ${MERGED} WHERE ${open}`);

  // 5.
  const end = `${quoteIdentifier(WINDOW_START)} + to_microseconds(${sizeMicros})`;
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE ${WINDOW_FINAL} AS SELECT struct_pack("start" := ${quoteIdentifier(WINDOW_START)}, "end" := ${end}) AS ${WINDOW_STRUCT}, ` +
      [
        ...plan.groupKeys.map((_, j) => quoteIdentifier(groupColumn(j))),
        ...plan.aggregates.map((a, i) => `${finalOf(a.kind, i, typeOf)} AS ${aggregateColumn(i)}`),
      ].join(", ") +
      ` FROM ${EMIT} ORDER BY ${list(keys)}`,
  );
  const [figures] = await sandbox.rows(
    `SELECT (SELECT count(*) FROM ${EMIT})::BIGINT AS emitted, (SELECT count(*) FROM ${MERGED} WHERE ${open})::BIGINT AS touched`,
  );
  return {
    sql: plan.finalSql,
    windowsEmitted: Number(figures?.["emitted"] ?? 0),
    windowsOpen: Number(figures?.["touched"] ?? 0),
  };
}
