import type { AutoCdcFlowPlan } from "../../pipeline/plan/index.ts";

/**
 * Which of a batch's own change events can still decide an SCD type 1 target (pure): the engine that
 * ran the flow's SQL (Spark) drops the rest before they reach the apply (apply-changes.ts), so a
 * replay of days with many events per key hands the apply about one event per key.
 *
 * An event `e` of key K is dropped only when another event of K in the same batch has a strictly
 * higher sequence (`latest`), or is a delete with a strictly higher sequence (`since-last-delete`,
 * with `ignore_null_updates`). The apply would never use `e` then, whatever the state and the other
 * flows' events hold (cdc-statements.ts):
 *
 * - without `ignore_null_updates`, a key's row and its retained event are its highest-sequence event
 *   (after the tie rule), never `e`; with it, a row takes the upserts after the key's last delete and
 *   the state keeps the events from that delete on, never `e`;
 * - the key stays touched (its highest event is kept), so the state rows loaded and written and the
 *   MERGE source are the same;
 * - of the events of K at one sequence, only the one the tie rule picks (`ties`: a delete first, then
 *   the higher md5 of the row's JSON, cdc-statements.ts `mergedEventsSql`) is kept, when every column
 *   of the hashed row has a type in `TIE_HASH_TYPES`; else all are kept and the apply picks. The
 *   batch's events share one apply time, and the rule is a total order, so the one kept meets the
 *   state's events of that sequence as the dropped ones would have.
 *
 * Events the apply refuses (a NULL key or sequence) and truncates are kept as they are, so its error
 * counts and the truncate sequence do not change. SCD type 2 keeps every sequence (each may be a
 * version), one event each.
 */
export interface CdcBatchReduction {
  readonly keys: readonly string[];
  /** The sequence columns, compared in order. */
  readonly sequence: readonly string[];
  readonly keep: "latest" | "since-last-delete" | "every-sequence";
  /**
   * The row the tie rule hashes: the keys, then the written columns (`columnList`, else every output
   * column, less `exceptColumnList`: cdc-layout.ts), each of a type in `types` or no tie is broken.
   */
  readonly ties: {
    readonly columnList?: readonly string[];
    readonly exceptColumnList?: readonly string[];
    readonly types: readonly string[];
  };
}

/**
 * The Spark types whose values Spark's `to_json` spells byte for byte as DuckDB's (a TIMESTAMP
 * without zone cast to text first), so both engines' tie hashes agree: proven on a corpus by
 * test/interop/spark-cdc-tie.test.ts. Not here: decimals (Spark keeps the scale's zeros: `1.50`, DuckDB
 * `1.5`), doubles and floats (`1.0E20` against `100000000000000000000.0`, `"NaN"` against `NaN`),
 * timestamps with a zone (DuckDB appends the offset), binaries, lists, maps and structs.
 */
export const TIE_HASH_TYPES: readonly string[] = [
  "long",
  "integer",
  "short",
  "byte",
  "string",
  "boolean",
  "date",
  "timestamp_ntz",
];

export function cdcBatchReduction(plan: AutoCdcFlowPlan): CdcBatchReduction {
  return {
    keys: [...plan.keys],
    sequence: [...plan.sequenceBy],
    keep: plan.scdType === 2 ? "every-sequence" : plan.ignoreNullUpdates ? "since-last-delete" : "latest",
    ties: {
      ...(plan.columnList ? { columnList: [...plan.columnList] } : {}),
      ...(plan.exceptColumnList ? { exceptColumnList: [...plan.exceptColumnList] } : {}),
      types: TIE_HASH_TYPES,
    },
  };
}
