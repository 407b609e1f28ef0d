import type { WatermarkStep } from "./stream-steps.ts";

/**
 * A stream-stream join (Spark's symmetric hash join, append mode): `source` (left) joined INNER or
 * LEFT OUTER with another stream under an event-time range `lo <= left time - right time <= hi`,
 * which lets the state of each side go once no later row of the other can match it.
 *
 * The executor binds `source` and `stream` to parts of each side (new rows, waiting rows) and runs:
 * `innerSql` (the flow's SQL, its join made INNER) for the pairs, `matchSql` (the left rows' `seq`
 * and `row` columns of those pairs, named `JOIN_SEQ`/`JOIN_ROW` on `leftAlias`) to mark matched left
 * rows, and for a LEFT join `sql` itself over let-go unmatched left rows and no right rows.
 */
export interface JoinFlowPlan {
  readonly kind: "join";
  readonly flow: string;
  /** The flow's SQL (the user's join), namespace references made bare. */
  readonly sql: string;
  readonly innerSql: string;
  readonly matchSql: string;
  readonly type: "inner" | "left";
  /** The joined stream's dataset, as the SQL names it. */
  readonly stream: string;
  /** How the query names each side (its alias, else the table name), lower case. */
  readonly leftAlias: string;
  readonly rightAlias: string;
  /** Bounds of `source time - joined time`, in microseconds. */
  readonly range: { readonly loMicros: number; readonly hiMicros: number };
  /** The ON condition, as SQL text. */
  readonly condition: string;
  readonly leftWatermark: WatermarkStep;
  readonly rightWatermark: WatermarkStep;
  /** What decides which rows the state keeps and what they match (type, range, ON): kept in the state. */
  readonly stateSignature: string;
}

/** The columns `matchSql` gives: a left row's batch and its place there, which key the join's state. */
export const JOIN_SEQ = "__ebb_seq";
export const JOIN_ROW = "__ebb_row";
