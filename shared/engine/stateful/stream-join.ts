import { quoteIdentifier } from "../../duck/sql-text.ts";
import {
  describeJoinChange,
  JOIN_ROW,
  JOIN_SEQ,
  type JoinFlowPlan,
  type WatermarkStep,
} from "../../pipeline/plan/index.ts";
import {
  IncompatibleStateError,
  type StateSchema,
  type StateVersion,
  type StateWriter,
} from "../../state/index.ts";
import type { Sandbox } from "../sandbox.ts";
import { advanceWatermark, eventTimeSql, lateSql } from "./watermark.ts";
import { z } from "zod";
import { MICRO_BATCH_NAME } from "../../pipeline/dataset-references.ts";

/**
 * Stream-stream join (Spark's symmetric hash join, append mode), INNER or LEFT OUTER, between
 * `source` (left) and the joined stream (right). State tables `join_left` and `join_right`: the rows
 * of each side that a later row of the other side may still match, keyed by the batch and arrival
 * order they came in; a left row also keeps whether it has matched.
 *
 * 1. Watermarks: each side's is its newest event time minus its delay; the join's is the lower of
 *    the two (once both sides have one). A row older than the join's watermark before the batch is
 *    late on either side: dropped and counted, as nothing it could match is kept.
 * 2. The batch's pairs: the flow's SQL (its join made INNER) over new left rows × all right rows
 *    (state and new), then over the state's left rows × new right rows: each pair once.
 * 3. Left rows that matched in this batch are marked.
 * 4. The watermark advances. With the condition's range `lo <= left.t - right.t <= hi` and every later
 *    row at or after the watermark, a left row at `t` can match no later right row once
 *    `t - lo < watermark`, and a right row none once `t + hi < watermark`: both are let go.
 * 5. LEFT OUTER: a left row let go unmatched is written once, by the flow's SQL over it and an empty
 *    right side (its right columns NULL).
 *
 * The rows of a batch are numbered in arrival order and keyed by (seq, row), so a retried batch
 * writes the same state.
 */

export const JOIN_LEFT_TABLE = "join_left";
export const JOIN_RIGHT_TABLE = "join_right";
/** A side's row is keyed by the batch it arrived in and its place there; a left row marks a match. */
export { JOIN_ROW, JOIN_SEQ };
export const JOIN_MATCHED = "__ebb_matched";
const OUT = "__ebb_join_out";

/** Each side's watermark, as kept in the state version's meta (epoch µs). */
export const joinWatermarksSchema = z.object({ left: z.number().optional(), right: z.number().optional() });
type JoinWatermarks = z.infer<typeof joinWatermarksSchema>;

export interface JoinSide {
  /** The batch's rows of this side, with `rowColumn` numbering them in arrival order. */
  readonly input: string;
  readonly rowColumn: string;
  /** Its columns and DuckDB types, in order (without `rowColumn`). */
  readonly columns: readonly { readonly name: string; readonly type: string }[];
  readonly watermark: WatermarkStep;
}

export interface StreamJoinRequest {
  readonly sandbox: Sandbox;
  readonly version: StateVersion;
  readonly writer: StateWriter;
  readonly seq: number;
  readonly flowName: string;
  readonly plan: JoinFlowPlan;
  readonly left: JoinSide;
  readonly right: JoinSide;
}

export interface StreamJoinResult {
  /** The SQL of the rows the batch appends. */
  readonly sql: string;
  readonly dropped: number;
  readonly pairs: number;
  /** Rows let go unmatched; a left outer join's only. */
  readonly leftOuterRows?: number;
  /** The join's watermark after the batch (epoch µs). */
  readonly watermark: number | undefined;
}

/** The join's watermark: the lower of the two sides', once both have one. */
export function joinWatermark(marks: JoinWatermarks): number | undefined {
  return marks.left === undefined || marks.right === undefined
    ? undefined
    : Math.min(marks.left, marks.right);
}

function sideSchema(side: JoinSide, left: boolean): StateSchema {
  return {
    key: [
      { name: JOIN_SEQ, type: "BIGINT" },
      { name: JOIN_ROW, type: "BIGINT" },
    ],
    value: [...side.columns, ...(left ? [{ name: JOIN_MATCHED, type: "BOOLEAN" }] : [])],
  };
}

/**
 * Refuses a state whose waiting rows were kept under another join (type, range or ON condition):
 * they would be matched by another rule. A state without a join can start one.
 */
export function checkJoinState(version: StateVersion, flowName: string, signature: string): void {
  const stored = version.meta["join"];
  if (typeof stored === "string" && stored !== signature) {
    const { stored: was, wanted } = describeJoinChange(stored, signature);
    throw new IncompatibleStateError(flowName, "join", was, wanted);
  }
}

export async function joinStreams(request: StreamJoinRequest): Promise<StreamJoinResult> {
  const { sandbox, writer, plan: join, left, right, seq } = request;
  checkJoinState(request.version, request.flowName, join.stateSignature);
  writer.setMeta("join", join.stateSignature);
  const stored = joinWatermarksSchema.safeParse(request.version.meta["join_watermarks"]);
  const previous: JoinWatermarks = stored.success ? stored.data : {};
  const before = joinWatermark(previous);

  // 1. Late rows, on either side.
  let dropped = 0;
  const kept = async (side: JoinSide, into: string, withMatched: boolean) => {
    const late = lateSql(side.watermark.column, before);
    const [figures] = await sandbox.rows(
      `SELECT count(*) FILTER (WHERE ${late})::BIGINT AS late, max(epoch_us(${eventTimeSql(side.watermark.column)})) FILTER (WHERE NOT ${late})::DOUBLE AS newest, ` +
        `min(epoch_us(${eventTimeSql(side.watermark.column)})) FILTER (WHERE NOT ${late})::DOUBLE AS oldest FROM ${side.input}`,
    );
    dropped += Number(figures?.["late"] ?? 0);
    await sandbox.run(
      `CREATE OR REPLACE TEMP TABLE ${into} AS SELECT ${seq}::BIGINT AS ${JOIN_SEQ}, ${quoteIdentifier(side.rowColumn)}::BIGINT AS ${JOIN_ROW}, ` +
        `${side.columns.map((c) => quoteIdentifier(c.name)).join(", ")}${withMatched ? `, false AS ${JOIN_MATCHED}` : ""} ` +
        `FROM ${side.input} WHERE NOT ${late}`,
    );
    const time = (name: string) => {
      const value = figures?.[name];
      return value === null || value === undefined ? undefined : Number(value);
    };
    return { newest: time("newest"), oldest: time("oldest") };
  };
  const newLeft = await kept(left, "__ebb_join_lnew", true);
  const newRight = await kept(right, "__ebb_join_rnew", false);
  const newestLeft = newLeft.newest;
  const newestRight = newRight.newest;
  const marks: JoinWatermarks = {
    ...optional("left", advanceWatermark(previous.left, newestLeft, left.watermark.delayMicros / 1000)),
    ...optional("right", advanceWatermark(previous.right, newestRight, right.watermark.delayMicros / 1000)),
  };
  const after = joinWatermark(marks);
  writer.setMeta("join_watermarks", marks);
  if (after !== undefined) writer.setMeta("watermark", { column: left.watermark.column, micros: after });

  const leftTable = request.version.table(JOIN_LEFT_TABLE, sideSchema(left, true));
  const rightTable = request.version.table(JOIN_RIGHT_TABLE, sideSchema(right, false));
  // Only the waiting rows the batch can pair with or lets go (step 4's bounds) are read.
  const range = join.range;
  const leftTime = (t: number) => Math.trunc(t);
  await leftTable.loadWhere(
    sandbox,
    waitingSql(left.watermark.column, [
      newRight.oldest === undefined
        ? undefined
        : {
            from: leftTime(newRight.oldest + range.loMicros),
            to: leftTime(newRight.newest! + range.hiMicros),
          },
      after === undefined ? undefined : { to: leftTime(after + range.loMicros), open: true },
    ]),
    "__ebb_join_lstate",
  );
  await rightTable.loadWhere(
    sandbox,
    waitingSql(right.watermark.column, [
      newLeft.oldest === undefined
        ? undefined
        : { from: leftTime(newLeft.oldest - range.hiMicros), to: leftTime(newLeft.newest! - range.loMicros) },
      after === undefined ? undefined : { to: leftTime(after - range.hiMicros), open: true },
    ]),
    "__ebb_join_rstate",
  );

  // 2. Pairs: the flow's SQL with `source` and the stream bound to each half in turn.
  const userColumns = (side: JoinSide) => side.columns.map((c) => quoteIdentifier(c.name)).join(", ");
  const bind = async (leftSql: string, rightSql: string, ids: boolean) => {
    await bindRelation(
      sandbox,
      MICRO_BATCH_NAME,
      `SELECT ${ids ? `${JOIN_SEQ}, ${JOIN_ROW}, ` : ""}${userColumns(left)} FROM (${leftSql})`,
    );
    await bindRelation(sandbox, join.stream, `SELECT ${userColumns(right)} FROM (${rightSql})`);
  };
  const allRight = "SELECT * FROM __ebb_join_rstate UNION ALL BY NAME SELECT * FROM __ebb_join_rnew";
  const inner = join.innerSql;
  const matches = join.matchSql;
  await bind("SELECT * FROM __ebb_join_lnew", allRight, false);
  await sandbox.run(`CREATE OR REPLACE TEMP TABLE ${OUT} AS ${inner}`);
  await bind("SELECT * FROM __ebb_join_lstate", "SELECT * FROM __ebb_join_rnew", false);
  await sandbox.run(`INSERT INTO ${OUT} ${inner}`);
  const [paired] = await sandbox.rows(`SELECT count(*)::BIGINT AS n FROM ${OUT}`);

  // 3.
  await bind("SELECT * FROM __ebb_join_lnew", allRight, true);
  await sandbox.run(`CREATE OR REPLACE TEMP TABLE __ebb_join_matched AS ${matches}`);
  await bind("SELECT * FROM __ebb_join_lstate", "SELECT * FROM __ebb_join_rnew", true);
  await sandbox.run(`INSERT INTO __ebb_join_matched ${matches}`);
  await sandbox.run(
    `CREATE OR REPLACE TEMP TABLE __ebb_join_lall AS SELECT l.* EXCLUDE (${JOIN_MATCHED}), ` +
      `l.${JOIN_MATCHED} OR EXISTS (SELECT 1 FROM __ebb_join_matched m WHERE m.${JOIN_SEQ} = l.${JOIN_SEQ} AND m.${JOIN_ROW} = l.${JOIN_ROW}) AS ${JOIN_MATCHED}, ` +
      `l.${JOIN_SEQ} = ${seq} AS __ebb_new, l.${JOIN_MATCHED} AS __ebb_was FROM (SELECT * FROM __ebb_join_lstate UNION ALL BY NAME SELECT * FROM __ebb_join_lnew) l`,
  );

  // 4. Let go (`gone`) what no later row can match.
  const leftGone =
    after === undefined
      ? "false"
      : `epoch_us(${eventTimeSql(left.watermark.column)}) < ${Math.trunc(after + join.range.loMicros)}`;
  const rightGone =
    after === undefined
      ? "false"
      : `epoch_us(${eventTimeSql(right.watermark.column)}) < ${Math.trunc(after - join.range.hiMicros)}`;
  const leftColumns = leftTable.columnList();
  writer.upsert(
    leftTable,
    `SELECT ${leftColumns} FROM __ebb_join_lall WHERE NOT (${leftGone}) AND (__ebb_new OR ${JOIN_MATCHED} <> __ebb_was)`,
  );
  writer.delete(
    leftTable,
    `SELECT ${JOIN_SEQ}, ${JOIN_ROW} FROM __ebb_join_lall WHERE ${leftGone} AND NOT __ebb_new`,
  );
  writer.upsert(
    rightTable,
    `SELECT ${rightTable.columnList()} FROM __ebb_join_rnew WHERE NOT (${rightGone})`,
  );
  writer.delete(rightTable, `SELECT ${JOIN_SEQ}, ${JOIN_ROW} FROM __ebb_join_rstate WHERE ${rightGone}`);

  // 5.
  let leftOuterRows: number | undefined;
  if (join.type === "left") {
    await bind(
      `SELECT * FROM __ebb_join_lall WHERE ${leftGone} AND NOT ${JOIN_MATCHED} ORDER BY ${JOIN_SEQ}, ${JOIN_ROW}`,
      "SELECT * FROM __ebb_join_rnew WHERE false",
      false,
    );
    await sandbox.run(`INSERT INTO ${OUT} ${join.sql}`);
    const [total] = await sandbox.rows(`SELECT count(*)::BIGINT AS n FROM ${OUT}`);
    leftOuterRows = Number(total?.["n"] ?? 0) - Number(paired?.["n"] ?? 0);
  }
  return {
    sql: `SELECT * FROM ${OUT}`,
    dropped,
    pairs: Number(paired?.["n"] ?? 0),
    ...(leftOuterRows !== undefined ? { leftOuterRows } : {}),
    watermark: after,
  };
}

/**
 * Rows whose event time lies in one of the ranges (epoch µs; `from` inclusive, `to` inclusive unless
 * `open`), compared as TIMESTAMPs so that a scan of a TIMESTAMP column can use its statistics.
 */
function waitingSql(
  column: string,
  ranges: readonly ({ from?: number; to: number; open?: boolean } | undefined)[],
): string {
  const time = eventTimeSql(column);
  const terms = ranges.flatMap((r) =>
    r === undefined
      ? []
      : [
          [
            ...(r.from !== undefined ? [`${time} >= make_timestamp(${r.from})`] : []),
            `${time} ${r.open ? "<" : "<="} make_timestamp(${r.to})`,
          ].join(" AND "),
        ],
  );
  return terms.length === 0 ? "false" : terms.map((t) => `(${t})`).join(" OR ");
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/** Points a name the flow's SQL reads (a view or a temp table, as the source loaded it) at `sql`. */
export async function bindRelation(sandbox: Sandbox, name: string, sql: string): Promise<void> {
  const literal = name.replace(/'/g, "''");
  const [kind] = await sandbox.rows(
    `SELECT 'VIEW' AS k FROM duckdb_views() WHERE view_name = '${literal}' AND NOT internal AND temporary ` +
      `UNION ALL SELECT 'TABLE' FROM duckdb_tables() WHERE table_name = '${literal}' AND temporary`,
  );
  if (kind) await sandbox.run(`DROP ${String(kind["k"])} ${quoteIdentifier(name)}`);
  await sandbox.run(`CREATE TEMP VIEW ${quoteIdentifier(name)} AS ${sql}`);
}
