import type { AggregateKind } from "./aggregate-columns.ts";
import type { DedupStep, WatermarkStep } from "./stream-steps.ts";

/**
 * A flow that aggregates its stream per event-time window, kept incrementally in append mode (Spark's
 * streaming `GROUP BY window(...)`): each batch's partial aggregates per window and key merge into the
 * state, and a window is written once, when the watermark passes its end.
 *
 * `partialSql` reads `WINDOW_ROWS` (each surviving row once per window it falls in, its window's
 * start in `WINDOW_START`) and gives per window start and key the partials (`partialColumn`);
 * `finalSql` is the user's select list over the finished windows in `WINDOW_FINAL` (`WINDOW_STRUCT`,
 * `groupColumn(j)`, `aggregateColumn(i)`), each column named as the flow's SQL names it.
 */
export interface WindowedFlowPlan {
  readonly kind: "windowed";
  readonly flow: string;
  readonly sql: string;
  readonly watermark: WatermarkStep;
  readonly dedup?: DedupStep;
  readonly window: WindowSpec;
  /** The grouping keys besides the window, and the aggregates, as SQL text. */
  readonly groupKeys: readonly string[];
  readonly aggregates: readonly { readonly kind: AggregateKind; readonly sql: string }[];
  readonly partialSql: string;
  readonly finalSql: string;
  /** What decides the meaning of the kept partials (window, keys, aggregates): kept in the state. */
  readonly stateSignature: string;
}

export interface WindowSpec {
  /** The event-time column the windows are cut from (the flow's watermark column). */
  readonly column: string;
  readonly sizeMicros: number;
  /** Equal to the size for a tumbling window. */
  readonly slideMicros: number;
}
