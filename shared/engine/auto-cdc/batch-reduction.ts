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
 * - events of equal sequence are all kept: the tie rule (delete first, then the higher md5 of the
 *   row's JSON) still picks among them in the apply, so no engine hashes a row but DuckDB.
 *
 * Events the apply refuses (a NULL key or sequence) and truncates are kept as they are, so its error
 * counts and the truncate sequence do not change. SCD type 2 keeps every event (each may be a version).
 */
export interface CdcBatchReduction {
  readonly keys: readonly string[];
  /** The sequence columns, compared in order. */
  readonly sequence: readonly string[];
  readonly keep: "latest" | "since-last-delete";
}

export function cdcBatchReduction(plan: AutoCdcFlowPlan): CdcBatchReduction | undefined {
  if (plan.scdType !== 1) return undefined;
  return {
    keys: [...plan.keys],
    sequence: [...plan.sequenceBy],
    keep: plan.ignoreNullUpdates ? "since-last-delete" : "latest",
  };
}
