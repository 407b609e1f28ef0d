import { partialColumn, type AggregateKind } from "../../pipeline/stream-aggregation.ts";

/**
 * The partials a decomposable aggregate keeps, how two partials of a key merge, and the aggregate's
 * value from its merged partials: shared by windowed aggregation and incremental materialized views.
 */

/** The partial columns of aggregate `i` and how two partials merge (avg: a sum and a count). */
export function partsOf(kind: AggregateKind, i: number): { name: string; merge: string }[] {
  if (kind === "avg")
    return [
      { name: partialColumn(i, "sum"), merge: "sum" },
      { name: partialColumn(i, "count"), merge: "sum" },
    ];
  return [{ name: partialColumn(i, kind), merge: kind === "count" ? "sum" : kind }];
}

/** Aggregate `i`'s value from its merged partials. */
export function finalOf(kind: AggregateKind, i: number): string {
  if (kind === "avg")
    return `CAST(${partialColumn(i, "sum")} AS DOUBLE) / NULLIF(${partialColumn(i, "count")}, 0)`;
  return partialColumn(i, kind);
}
