import type { AggregateKind } from "./aggregate-columns.ts";

/**
 * A materialized view kept incrementally: a GROUP BY of decomposable aggregates over one input
 * table. `partialSql` (over the input's new rows, by its name `input`) gives per key the partials
 * (`groupColumn(j)`, `partialColumn`); `finalSql` is the view's select list over the merged partials
 * in `VIEW_FINAL` (`groupColumn(j)`, `aggregateColumn(i)`).
 */
export interface IncrementalViewPlan {
  readonly kind: "incremental";
  readonly view: string;
  /** The view's query, namespace references made bare. */
  readonly sql: string;
  /** The input table the view groups, lower case. */
  readonly input: string;
  readonly groupKeys: readonly string[];
  readonly aggregates: readonly { readonly kind: AggregateKind; readonly sql: string }[];
  readonly partialSql: string;
  readonly finalSql: string;
  /** What decides the meaning of the kept partials (keys, aggregates, filter, input). */
  readonly stateSignature: string;
}
